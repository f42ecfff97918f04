import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Exit, Fiber, Schedule } from "effect"
import type { Workspace } from "../../src/api/Workspace"
import { withActor } from "../../src/context/Frames"
import { Records } from "../../src/records/Records"
import { UnitOfWork } from "../../src/unitOfWork/UnitOfWork"
import { runCli } from "../support/cli"
import { freshWorkspace, TestServices } from "../support/TestApp"

/** `admin records import` (docs/writes.md, "Importing a file"). */

const someone = { kind: "user", id: "u-import", name: "Importer", email: "importer@example.com" } as const

const scratch = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "records-import-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const dealLine = (i: number) =>
  JSON.stringify({ title: `Deal ${i}`, stage: "open", lineItems: [{ product: "Kiosk", quantity: i, price: "10.00" }] })

/** The deals by title: how many records and audit rows each title has. */
const deals = (workspace: Workspace) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ records: number; titles: number; audit: number; orphans: number }>`SELECT
        (SELECT count(*)::int FROM ${sql(workspace.table("records"))} WHERE business_object = 'crm/deal') AS records,
        (SELECT count(DISTINCT values->>'title')::int FROM ${sql(workspace.table("records"))}
          WHERE business_object = 'crm/deal') AS titles,
        (SELECT count(*)::int FROM ${sql(workspace.table("audit_entries"))} WHERE business_object = 'crm/deal') AS audit,
        (SELECT count(*)::int FROM ${sql(workspace.table("records"))} r WHERE business_object = 'crm/deal'
          AND NOT EXISTS (SELECT 1 FROM ${sql(workspace.table("audit_entries"))} a
            WHERE a.business_object_id = r.id::text AND a.operation = 'created')) AS orphans`.pipe(
      Effect.map((rows) => rows[0]),
      Effect.orDie
    )
  )

const importArgs = (workspace: Workspace, file: string) =>
  ["records", "import", "--workspace", workspace.slug, "--business-object", "crm/deal", file] as const

layer(TestServices, { excludeTestServices: true })("admin records import", (it) => {
  it.effect("interrupted after a batch and run again: every record exactly once, each with its audit row", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const file = join(yield* scratch, "deals.ndjson")
      writeFileSync(file, `${Array.from({ length: 2_500 }, (_, i) => dealLine(i)).join("\n")}\n`)

      const first = yield* Effect.forkChild(runCli(...importArgs(workspace, file)))
      // Interrupted once its first batch (1,000 lines) is in: the next one is rolled back or in, never half.
      yield* deals(workspace).pipe(
        Effect.repeat({ until: (now) => (now?.records ?? 0) >= 1_000, schedule: Schedule.spaced("10 millis") })
      )
      yield* Fiber.interrupt(first)
      const between = yield* deals(workspace)
      expect([1_000, 2_000, 2_500]).toContain(between?.records)

      const again = yield* runCli(...importArgs(workspace, file))
      expect(Exit.isSuccess(again.exit), JSON.stringify(again.stderr)).toBe(true)
      expect(again.stderr).toContain("batch 1: lines 1-1000, 1,000 records already imported")
      expect(again.stdout.at(-1)).toMatch(
        new RegExp(
          `^imported .*deals\\.ndjson into ${workspace.slug} crm/deal: ${(2_500 - (between?.records ?? 0)).toLocaleString("en-US")} records written, ${(between?.records ?? 0).toLocaleString("en-US")} already imported \\(3 batches, [\\d.]+ s\\)$`
        )
      )
      expect(yield* deals(workspace)).toEqual({ records: 2_500, titles: 2_500, audit: 2_500, orphans: 0 })

      // Once more: everything is replayed, nothing written.
      const third = yield* runCli(...importArgs(workspace, file))
      expect(third.stdout.at(-1)).toMatch(/: 0 records written, 2,500 already imported/)
      expect(yield* deals(workspace)).toEqual({ records: 2_500, titles: 2_500, audit: 2_500, orphans: 0 })
    })
  )

  it.effect("a refused batch names its lines and stops; fixed and run again, it goes on where it stopped", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const existing = yield* (yield* UnitOfWork)
        .run(workspace, (yield* Records).create("crm/deal", { title: "Existing", stage: "lead" }))
        .pipe(withActor(someone))
      const file = join(yield* scratch, "deals.ndjson")
      const lines = Array.from({ length: 1_500 }, (_, i) => dealLine(i))
      lines[1_199] = JSON.stringify({ stage: "open" })
      lines[1_299] = JSON.stringify({ id: existing.id, values: { stage: "won" }, ifMatch: 7 })
      writeFileSync(file, `${lines.join("\n")}\n\n`)

      const refused = yield* runCli(...importArgs(workspace, file))
      expect(Exit.isFailure(refused.exit)).toBe(true)
      expect(refused.stderr).toContain("line 1200: invalid values for crm/deal: title: a value is required")
      expect(refused.stderr).toContain(
        `line 1300: the crm/deal record ${existing.id} is at version 1, not 7: nothing was written`
      )
      expect((yield* deals(workspace))?.records).toBe(1_001)

      lines[1_199] = dealLine(1_199)
      lines[1_299] = JSON.stringify({ id: existing.id, values: { stage: "won" }, ifMatch: 1 })
      writeFileSync(file, `${lines.join("\n")}\n`)
      const fixed = yield* runCli(...importArgs(workspace, file))
      expect(Exit.isSuccess(fixed.exit), JSON.stringify(fixed.stderr)).toBe(true)
      expect(fixed.stderr).toEqual([
        "batch 1: lines 1-1000, 1,000 records already imported",
        "batch 2: lines 1001-1500, 500 records written"
      ])
      // 1,499 new deals and the existing one, updated once.
      expect(yield* deals(workspace)).toEqual({ records: 1_500, titles: 1_500, audit: 1_501, orphans: 0 })
      const updated = yield* (yield* Records).get(workspace, "crm/deal", existing.id)
      expect([updated.version, updated.values.stage]).toEqual([2, "won"])
    })
  )

  it.effect("a line that is not a record is refused by number; nothing of its batch is written", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const file = join(yield* scratch, "deals.ndjson")
      writeFileSync(file, `${dealLine(1)}\n{"title": \n${dealLine(3)}\n`)
      const run = yield* runCli(...importArgs(workspace, file))
      expect(Exit.isFailure(run.exit)).toBe(true)
      expect(Exit.isFailure(run.exit) ? JSON.stringify(run.exit.cause) : "").toContain("line 2: not JSON")
      expect((yield* deals(workspace))?.records).toBe(0)
    })
  )
})
