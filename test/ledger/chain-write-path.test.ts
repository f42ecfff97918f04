import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { withActor } from "../../src/context/Frames"
import { verificationPassed, verifyLedger } from "../../src/ledger/Verification"
import { Records } from "../../src/records/Records"
import { UnitOfWork } from "../../src/unitOfWork/UnitOfWork"
import { freshWorkspace, TestServices } from "../support/TestApp"

const someone = { kind: "user", id: "u-ledger", name: "Ledger", email: "ledger@example.com" } as const

layer(TestServices, { excludeTestServices: true })("the write path chains every audit row", (it) => {
  it.effect("concurrent units of work in one workspace: the chain the SQL wrote is the one Node recomputes", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const records = yield* Records
      const units = yield* UnitOfWork
      const created = yield* Effect.forEach(
        [0, 1, 2, 3],
        (i) =>
          units.run(
            workspace,
            records.create("crm/deal", {
              title: `deal ${i}`,
              stage: "lead",
              address: { street: "Main 1", city: "Oslo" },
              lineItems: [{ id: "a", product: "p", quantity: 1 }]
            })
          ),
        { concurrency: 4 }
      )
      yield* Effect.forEach(
        Array.from({ length: 24 }, (_, i) => i),
        (i) => {
          const record = created[i % created.length]
          return record === undefined
            ? Effect.void
            : units.run(workspace, records.update("crm/deal", record.id, { amount: `${i}.00`, title: `deal ${i}` }))
        },
        { concurrency: 8, discard: true }
      )
      const report = yield* verifyLedger(workspace, [])
      expect(report.chainFault).toBeNull()
      expect(report.recordFaults).toEqual([])
      expect(report.rows).toBeGreaterThanOrEqual(28)
      expect(verificationPassed(report)).toBe(true)

      // One value changed in SQL by a superuser: the chain names its row.
      const sql = yield* SqlClient.SqlClient
      const table = sql(workspace.table("audit_entries"))
      const [victim] = yield* sql<{ position: string }>`SELECT position::text AS position FROM ${table}
        WHERE operation = 'updated' ORDER BY position LIMIT 1 OFFSET 3`
      yield* sql`ALTER TABLE ${table} DISABLE TRIGGER USER`
      yield* sql`UPDATE ${table} SET changes = jsonb_set(changes, '{amount,to}', '"1.00"')
        WHERE position = ${victim?.position ?? "0"}::bigint`
      yield* sql`ALTER TABLE ${table} ENABLE TRIGGER USER`
      const tampered = yield* verifyLedger(workspace, [])
      expect(tampered.chainFault).toMatchObject({ kind: "changed", position: BigInt(victim?.position ?? "0") })
    }).pipe(withActor(someone))
  )
})
