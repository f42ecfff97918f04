import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { demo } from "../../src/app/Provisioning"
import { eventually } from "../broadcast/streamHelpers"
import { clientFor, recordsOf } from "../support/api"
import { shellBlocks } from "../support/docExamples"
import { signIn } from "../support/http"
import { startService } from "../support/service"

const run = promisify(execFile)

const freshDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "readme-tour-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

/** The README's curl tour: its `sh` blocks that sign in with, and then send, `cookies.txt`. */
const tour = () =>
  shellBlocks(readFileSync(new URL("../../README.md", import.meta.url), "utf8")).filter((block) =>
    block.includes("cookies.txt")
  )

describe("the README's tour", () => {
  it.live(
    "runs as written against a fresh embedded service on a port other than 3000, PORT set: every write is accepted and three activities come of it",
    () =>
      Effect.gen(function* () {
        const dataDir = yield* freshDir
        const service = yield* startService({ DATABASE_URL: undefined, REDIS_URL: undefined, DATA_DIR: dataDir }, [
          "node",
          "dist/server/main.js"
        ])
        const port = new URL(service.base).port
        expect(port).not.toBe("3000")
        const blocks = tour()
        expect(blocks).toHaveLength(2)
        expect(blocks.join("\n")).not.toContain("127.0.0.1:3000")

        const script = `set -euo pipefail\n${blocks.join("\n")}\nprintf '\\ndeal=%s company=%s\\n' "$deal" "$company"\n`
        const { stdout } = yield* Effect.promise(() =>
          run("bash", ["-c", script], { cwd: dataDir, env: { ...process.env, PORT: port }, timeout: 60_000 })
        )
        const ids = /^deal=(\S+) company=(\S+)$/m.exec(stdout)
        expect(ids?.[1]).toMatch(/^[0-9a-f-]{36}$/)
        expect(ids?.[2]).toMatch(/^[0-9a-f-]{36}$/)
        // No write was refused (a wrong Origin is a 403 Forbidden), nothing failed.
        expect(stdout).not.toMatch(/"_tag":"(Forbidden|Unauthorized|BadRequest|NotFound|UnprocessableEntity)"/)

        const client = clientFor(
          service.base,
          yield* signIn(service.base, { workspace: demo.workspace, email: demo.email, password: demo.password })
        )
        const subjects = Effect.map(recordsOf(client, "crm/activity").list(), (answer) =>
          answer.body.records.map((record) => record.values.subject).sort()
        )
        yield* eventually(
          "the job's and the workflow's activities",
          Effect.map(subjects, (all) => all.length >= 3)
        )
        expect(yield* subjects).toEqual(["Acme has won 1 deal", 'Deal "Kiosk" was archived', "Follow up on Kiosk"])
      }),
    180_000
  )
})
