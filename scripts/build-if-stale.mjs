// `npm start` and `npm run admin` run this with plain Node before the compiled
// service or admin command line: it builds (`npm run build`) only when the build
// is missing or older than a source, so a fresh clone's `npm install && npm start`
// works and a built one starts at once.
import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"

/** Written last by scripts/build.ts: a build without it is incomplete. */
const buildStamp = "dist/.build-complete"
/** Held while one process builds, so two starts at once (tests in parallel) do not write dist/ together. */
const buildLock = "dist/.build-lock"

/** What the build reads: a change to any of them makes the build stale. */
const sources = [
  "src",
  "web",
  "scripts",
  "package.json",
  "vite.config.ts",
  "tsconfig.json",
  "tsconfig.client.json",
  "tsconfig.package.json"
]

/** The newest modification time under `path`, ignoring build output and node_modules. */
const newestChange = (path) => {
  if (!existsSync(path)) return 0
  const stats = statSync(path)
  if (!stats.isDirectory()) return stats.mtimeMs
  return readdirSync(path)
    .filter((name) => name !== "node_modules" && name !== "dist")
    .reduce((newest, name) => Math.max(newest, newestChange(join(path, name))), stats.mtimeMs)
}

const isStale = () => {
  const builtAt = existsSync(buildStamp) ? statSync(buildStamp).mtimeMs : -1
  return builtAt < Math.max(...sources.map(newestChange))
}

const isAlive = (pid) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return error.code === "EPERM"
  }
}

const pause = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)

/** Takes the build lock, waiting while a live process holds it; a dead holder's lock is taken over. */
const lock = () => {
  mkdirSync("dist", { recursive: true })
  for (;;) {
    try {
      writeFileSync(buildLock, String(process.pid), { flag: "wx" })
      return
    } catch {
      const holder = Number(readFileSync(buildLock, "utf8"))
      // An empty file is a holder that has not written its pid yet.
      if (Number.isInteger(holder) && holder > 0 && !isAlive(holder)) rmSync(buildLock, { force: true })
      else pause(200)
    }
  }
}

if (isStale()) {
  lock()
  try {
    // Another process may have built while this one waited for the lock.
    if (isStale()) {
      console.error(
        existsSync(buildStamp)
          ? "sources changed since the build: building first (npm run build)"
          : "no build yet: building first (npm run build)"
      )
      const npm = process.platform === "win32" ? "npm.cmd" : "npm"
      // Everything the build prints goes to standard error: standard output is the admin command's (a listing
      // piped into a script), and standard input its own (the password it may read).
      const build = spawnSync(npm, ["run", "--silent", "build"], { stdio: ["ignore", 2, 2] })
      if (build.status !== 0) process.exitCode = build.status ?? 1
    }
  } finally {
    rmSync(buildLock, { force: true })
  }
}
