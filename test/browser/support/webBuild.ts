import { execFile } from "node:child_process"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"

const run = promisify(execFile)

/**
 * Builds the web page as `npm run build:web` does, into a temporary folder
 * of its own (so that test runs building at the same time never serve each
 * other's half-written files). Returns the folder and its removal.
 */
export const buildWebPage = async (): Promise<{ readonly root: string; readonly remove: () => Promise<void> }> => {
  const root = await mkdtemp(join(tmpdir(), "web-build-"))
  try {
    await run(
      process.execPath,
      ["node_modules/vite/bin/vite.js", "build", "--outDir", root, "--emptyOutDir", "--logLevel", "error"],
      {
        cwd: process.cwd(),
        env: { ...process.env, NODE_ENV: "production" },
        timeout: 180_000
      }
    )
  } catch (error) {
    await rm(root, { recursive: true, force: true })
    throw new Error(`vite build failed: ${error instanceof Error ? error.message : String(error)}`)
  }
  return { root, remove: () => rm(root, { recursive: true, force: true }) }
}
