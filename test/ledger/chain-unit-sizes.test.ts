import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { withActor } from "../../src/context/Frames"
import { verificationPassed, verifyLedger } from "../../src/ledger/Verification"
import { Records } from "../../src/records/Records"
import { UnitOfWork } from "../../src/unitOfWork/UnitOfWork"
import { freshWorkspace, TestServices } from "../support/TestApp"

const someone = { kind: "user", id: "u-unit-sizes", name: "Unit Sizes", email: "sizes@example.com" } as const

/**
 * The write path links a one-row unit in the counter's UPDATE and a larger
 * unit in a recursive CTE (src/unitOfWork/AuditStaging.ts): both must give
 * the links Node recomputes, whichever order their units commit in.
 */
layer(TestServices, { excludeTestServices: true })("units of one row and of several, interleaved", (it) => {
  it.effect("commit concurrently into one chain that verifies, with gapless positions", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const records = yield* Records
      const units = yield* UnitOfWork
      const sizes = Array.from({ length: 24 }, (_, i) => [1, 3, 1, 2, 1, 5][i % 6] ?? 1)
      yield* Effect.forEach(
        sizes,
        (size, unit) =>
          units.run(
            workspace,
            Effect.forEach(
              Array.from({ length: size }, (_, i) => i),
              (i) => records.create("crm/company", { name: `unit ${unit}, row ${i}` })
            )
          ),
        { concurrency: 6, discard: true }
      )

      const sql = yield* SqlClient.SqlClient
      const perUnit = yield* sql<{ readonly rows: number }>`SELECT count(*)::int AS rows
        FROM ${sql(workspace.table("audit_entries"))} GROUP BY correlation_id`
      expect(perUnit.map((unit) => unit.rows).sort()).toEqual([...sizes].sort())
      const positions = yield* sql<{ readonly position: string }>`SELECT e.position::text AS position
        FROM ${sql(workspace.table("audit_entries"))} AS e ORDER BY e.position`
      const total = sizes.reduce((sum, size) => sum + size, 0)
      expect(positions.map((row) => row.position)).toEqual(Array.from({ length: total }, (_, i) => String(i + 1)))

      const report = yield* verifyLedger(workspace, [])
      expect(report.chainFault).toBeNull()
      expect(report.rows).toBe(total)
      expect(verificationPassed(report)).toBe(true)
    }).pipe(withActor(someone))
  )
})
