import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { Workspace } from "../../src/api/Workspace"
import { freshWorkspace, TestServices } from "../support/TestApp"

const hash = `\\x${"ab".repeat(32)}`

/** A row as the WAL-mode INSERT leaves it: salted, without position or hash. Returns its id. */
const waitingRow = (workspace: Workspace) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const id = crypto.randomUUID()
    yield* sql`INSERT INTO ${sql(workspace.table("audit_entries"))}
        (id, actor, correlation_id, business_object, business_object_id, operation, record, salt)
      VALUES (${id}, '{"kind":"system","name":"test"}', gen_random_uuid(), 'crm/company', 'c1', 'created',
        '{"name":"Acme"}', decode(${"00".repeat(16)}, 'hex'))`
    return id
  })

/** The messages of a failure and of its causes, one after another. */
const messages = (error: unknown): string => {
  const parts: Array<string> = []
  for (let at: unknown = error; typeof at === "object" && at !== null; at = (at as { cause?: unknown }).cause) {
    if ("message" in at) parts.push(String(at.message))
  }
  return parts.join(" / ")
}

const refused = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.map(Effect.flip(effect), messages)

/**
 * Migration 0011 (src/tenancy/migrations/feedPositionsFromWal.ts): a row may
 * wait for its feed position, and be given it exactly once; nothing else of
 * it changes but through an erasure; DELETE stays refused.
 */
layer(TestServices, { excludeTestServices: true })("audit rows waiting for their feed position", (it) => {
  it.effect("a salted row inserted without a position waits; one without salt (by hand) is positioned at once", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const sql = yield* SqlClient.SqlClient
      const table = sql(workspace.table("audit_entries"))
      const id = yield* waitingRow(workspace)
      const hand = crypto.randomUUID()
      yield* sql`INSERT INTO ${table} (id, actor, correlation_id, business_object, business_object_id, operation, record)
        VALUES (${hand}, '{"kind":"system","name":"test"}', gen_random_uuid(), 'crm/company', 'c2', 'created', '{}')`
      const rows = yield* sql<{ id: string; position: string | null }>`SELECT id::text AS id, position::text AS position
        FROM ${table} ORDER BY seq`
      expect(rows).toEqual([
        { id, position: null },
        { id: hand, position: "1" }
      ])
    })
  )

  it.effect("position and hash are set once, together, nothing else changed; then never again", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const sql = yield* SqlClient.SqlClient
      const table = sql(workspace.table("audit_entries"))
      const id = yield* waitingRow(workspace)
      const other = yield* waitingRow(workspace)

      expect(yield* refused(sql`UPDATE ${table} SET position = 7 WHERE id = ${id}`)).toContain("permanent")
      expect(yield* refused(sql`UPDATE ${table} SET hash = ${hash}::bytea WHERE id = ${id}`)).toContain("permanent")
      expect(
        yield* refused(
          sql`UPDATE ${table} SET position = 7, hash = ${hash}::bytea, business_object_id = 'c9' WHERE id = ${id}`
        )
      ).toContain("permanent")
      expect(
        yield* refused(
          sql`UPDATE ${table} SET position = 7, hash = ${hash}::bytea, record = '{"name":"Forged"}' WHERE id = ${id}`
        )
      ).toContain("permanent")

      yield* sql`UPDATE ${table} SET position = 7, hash = ${hash}::bytea WHERE id = ${id}`
      expect(yield* refused(sql`UPDATE ${table} SET position = 8, hash = ${hash}::bytea WHERE id = ${id}`)).toContain(
        "permanent"
      )
      expect(yield* refused(sql`UPDATE ${table} SET position = 8 WHERE id = ${id}`)).toContain("permanent")
      expect(yield* refused(sql`DELETE FROM ${table} WHERE id = ${other}`)).toContain("permanent")
      const rows = yield* sql<{ id: string; position: string | null }>`SELECT id::text AS id, position::text AS position
        FROM ${table} ORDER BY seq`
      expect(rows).toEqual([
        { id, position: "7" },
        { id: other, position: null }
      ])
    })
  )

  it.effect("an erasure may rewrite a waiting row's values, never give it a position", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const sql = yield* SqlClient.SqlClient
      const table = sql(workspace.table("audit_entries"))
      const id = yield* waitingRow(workspace)
      yield* sql.withTransaction(
        Effect.gen(function* () {
          yield* sql`SET LOCAL abs.audit_erasure = 'on'`
          yield* sql`UPDATE ${table} SET record = '{"name":{"$erased":"00"}}', salt = NULL WHERE id = ${id}`
        })
      )
      const positioned = sql.withTransaction(
        Effect.gen(function* () {
          yield* sql`SET LOCAL abs.audit_erasure = 'on'`
          yield* sql`UPDATE ${table} SET record = '{}', position = 3, hash = ${hash}::bytea WHERE id = ${id}`
        })
      )
      expect(yield* refused(positioned)).toContain("only the values")
      const rows = yield* sql<{ position: string | null; salt: string | null }>`SELECT position::text AS position,
        encode(salt, 'hex') AS salt FROM ${table}`
      expect(rows).toEqual([{ position: null, salt: null }])
    })
  )
})
