import { mkdirSync, rmSync, writeFileSync } from "node:fs"
import { build as buildWeb } from "vite"
import { buildClientPackage } from "./build/clientPackage"
import { buildServer } from "./build/server"

/**
 * `npm run build`: the service and the admin command line into dist/server,
 * the client package into dist/lib, the web page into dist/web; then the
 * stamp `npm start` compares with the sources (scripts/build-if-stale.mjs).
 */
const buildStamp = "dist/.build-complete"
const started = performance.now()
rmSync(buildStamp, { force: true })
rmSync("dist/server", { recursive: true, force: true })
await buildServer("dist/server")
buildClientPackage("dist/lib")
await buildWeb({ configFile: "vite.config.ts", logLevel: "warn" })
mkdirSync("dist", { recursive: true })
writeFileSync(buildStamp, `${new Date().toISOString()}\n`)
console.log(`built dist/server, dist/lib and dist/web in ${((performance.now() - started) / 1000).toFixed(1)} s`)
