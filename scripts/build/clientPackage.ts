import { execFileSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { emittedFileFor, rewriteRelativeSpecifiers } from "./relativeSpecifiers"

const emittedFiles = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return emittedFiles(path)
    return name.endsWith(".js") || name.endsWith(".d.ts") ? [path] : []
  })

/**
 * The client package: `tsc -p tsconfig.package.json` emits src/client (and the
 * contract it imports) as ESM with declarations into `outDir`; then every
 * relative import is given its file name, so plain Node and `node16`
 * resolution read it as well as bundlers do.
 */
export const buildClientPackage = (outDir: string) => {
  rmSync(outDir, { recursive: true, force: true })
  execFileSync(process.execPath, [resolve("node_modules/typescript/bin/tsc"), "-p", "tsconfig.package.json"], {
    stdio: "inherit"
  })
  for (const file of emittedFiles(outDir)) {
    const here = dirname(file)
    const text = readFileSync(file, "utf8")
    const rewritten = rewriteRelativeSpecifiers(text, (specifier) =>
      emittedFileFor(specifier, (path) => existsSync(join(here, path)))
    )
    if (rewritten !== text) writeFileSync(file, rewritten)
  }
}
