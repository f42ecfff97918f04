import { describe, expect, it } from "vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { join, resolve } from "node:path"
import { spawnSync } from "node:child_process"
import * as esbuild from "esbuild"
import { lazyCommonJs, requireBanner } from "../../scripts/build/server"

const repo = resolve(import.meta.dirname, "../..")

/**
 * The server bundle's stand-ins for undici and ws (scripts/build/server.ts):
 * importing them loads nothing, and the first use of an export loads the
 * real package, which then works as if it had been imported directly.
 */
describe("lazy CommonJS stand-ins in the server bundle", () => {
  it("load undici and ws on first use only, and then behave as the packages themselves", async () => {
    // Inside the repository, so that the bundle's `require` finds node_modules as dist/server's does.
    const folder = mkdtempSync(join(repo, ".lazy-commonjs-"))
    try {
      const outfile = join(folder, "probe.mjs")
      await esbuild.build({
        stdin: {
          contents: [
            'import * as Undici from "undici"',
            'import * as WS from "ws"',
            "const loaded = () => Object.keys(require.cache).filter((k) => /node_modules[\\\\/](undici|ws)[\\\\/]/.test(k)).length",
            "const before = loaded()",
            "const server = new WS.WebSocketServer({ noServer: true })",
            "server.close()",
            "const agent = new Undici.Agent()",
            "await agent.close()",
            "console.log(JSON.stringify({ before, after: loaded(), agent: agent instanceof Undici.Dispatcher }))"
          ].join("\n"),
          resolveDir: repo,
          loader: "js"
        },
        outfile,
        bundle: true,
        format: "esm",
        platform: "node",
        target: "node20",
        plugins: [lazyCommonJs(["undici", "ws"])],
        banner: { js: requireBanner },
        logLevel: "silent"
      })
      const run = spawnSync(process.execPath, [outfile], { encoding: "utf8" })
      expect(run.status, run.stderr).toBe(0)
      const result = JSON.parse(run.stdout.trim())
      expect(result.before).toBe(0)
      expect(result.after).toBeGreaterThan(0)
      expect(result.agent).toBe(true)
    } finally {
      rmSync(folder, { recursive: true, force: true })
    }
  })
})
