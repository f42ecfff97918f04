import { generateKeyPairSync, randomUUID } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import { expect, layer } from "@effect/vitest"
import { Effect, Exit, Predicate } from "effect"
import type { Workspace } from "../../src/api/Workspace"
import { withActor } from "../../src/context/Frames"
import { digestLine, digestOf, signDigest } from "../../src/ledger/Digests"
import { publicKeyText } from "../../src/ledger/LedgerKeys"
import { readHead } from "../../src/ledger/LedgerRows"
import { verificationPassed, verifyLedger } from "../../src/ledger/Verification"
import { Records } from "../../src/records/Records"
import { migrateSchema } from "../../src/tenancy/Migrations"
import { workspaceMigrations } from "../../src/tenancy/migrations/workspace"
import { UnitOfWork } from "../../src/unitOfWork/UnitOfWork"
import { runCli } from "../support/cli"
import { runProcess } from "../support/subprocess"
import { freshWorkspace, TestServices } from "../support/TestApp"

/**
 * Migration 0009 (src/tenancy/migrations/ledger.ts) on a workspace that had
 * audit rows before the ledger: written as the service wrote them before
 * 0008 (positions became their `seq`, with the holes rolled-back units
 * left) and after it (positions from the counter), chained once by the
 * migration, after which the write path chains on from the counter's head.
 */

const someone = { kind: "user", id: "u-migrated", name: "Migrated", email: "migrated@example.com" } as const
const actor = JSON.stringify({ kind: "user", id: "u-old", name: "Old Service", email: "old@example.com" })

const migrationsUpTo = (last: string) => {
  const names = Object.keys(workspaceMigrations)
  const upTo = names.slice(0, names.indexOf(last) + 1)
  expect(upTo.at(-1)).toBe(last)
  return Object.fromEntries(upTo.flatMap((name) => Object.entries(workspaceMigrations).filter(([key]) => key === name)))
}

/** The workspace's schema again from nothing, migrated up to `last` only. */
const schemaUpTo = (workspace: Workspace, last: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`DROP SCHEMA ${sql(workspace.schema)} CASCADE`
    yield* migrateSchema(workspace.schema, migrationsUpTo(last))
  }).pipe(Effect.orDie)

/** An audit row inserted as the service did before the ledger: no salt, no hash; the position as it was taken then. */
const oldRow = (
  workspace: Workspace,
  row: {
    readonly businessObject: string
    readonly id: string
    readonly operation: "created" | "updated" | "deleted"
    readonly recordVersion: number | null
    readonly record?: unknown
    readonly changes?: unknown
    readonly parentCorrelationId?: string
  }
) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`INSERT INTO ${sql(workspace.table("audit_entries"))}
      (id, actor, correlation_id, business_object, business_object_id, operation, record_version, record, changes
       ${row.parentCorrelationId === undefined ? sql.literal("") : sql.literal(", parent_correlation_id")})
      VALUES (${randomUUID()}::uuid, ${actor}::jsonb, ${randomUUID()}::uuid, ${row.businessObject}, ${row.id},
        ${row.operation}, ${row.recordVersion}, ${row.record === undefined ? null : JSON.stringify(row.record)}::jsonb,
        ${row.changes === undefined ? null : JSON.stringify(row.changes)}::jsonb
        ${row.parentCorrelationId === undefined ? sql.literal("") : sql`, ${row.parentCorrelationId}::uuid`})`
  ).pipe(Effect.orDie)

const storedRecord = (
  workspace: Workspace,
  record: { readonly businessObject: string; readonly id: string; readonly values: unknown; readonly version: number }
) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`INSERT INTO ${sql(workspace.table("records"))} (business_object, id, state, values, version)
      VALUES (${record.businessObject}, ${record.id}::uuid, 'operational', ${JSON.stringify(record.values)}::jsonb,
        ${record.version})
      ON CONFLICT (business_object, id) DO UPDATE SET values = EXCLUDED.values, version = EXCLUDED.version`
  ).pipe(Effect.orDie)

/** A seq value taken and never used: a unit that rolled back left this hole. */
const hole = (workspace: Workspace) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`SELECT nextval(pg_get_serial_sequence(${workspace.table("audit_entries")}, 'seq'))`
  ).pipe(Effect.orDie)

/** What PostgreSQL said when it refused `statement` (run in a transaction of its own, after `before`). */
const refusal = (statement: (sql: SqlClient.SqlClient) => Effect.Effect<unknown, SqlError>, before?: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const error: SqlError = yield* Effect.flip(
      sql.withTransaction(
        Effect.gen(function* () {
          if (before !== undefined) yield* sql.unsafe(before)
          yield* statement(sql)
        })
      )
    )
    const cause = error.reason.cause
    return Predicate.hasProperty(cause, "message") ? String(cause.message) : String(cause)
  })

layer(TestServices, { excludeTestServices: true })("migration 0009 over the rows of an older service", (it) => {
  it.effect("chains the rows as found, gaps and all; the write path chains on; the verification passes", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const sql = yield* SqlClient.SqlClient
      const table = sql(workspace.table("audit_entries"))
      const acme = randomUUID()
      const gone = randomUUID()
      const deal = randomUUID()

      // Before 0008: positions will be the seq, holes included.
      yield* schemaUpTo(workspace, "0007_idempotent_answer_headers")
      yield* oldRow(workspace, {
        businessObject: "crm/company",
        id: acme,
        operation: "created",
        recordVersion: null,
        record: { name: "Acme" }
      })
      yield* hole(workspace)
      yield* hole(workspace)
      yield* oldRow(workspace, {
        businessObject: "crm/company",
        id: gone,
        operation: "created",
        recordVersion: 1,
        record: { name: "Gone" }
      })
      const dealValues = {
        title: "Kiosk",
        address: { street: "Main 1", city: "Oslo" },
        lineItems: [{ id: "l1", product: "Screen", quantity: 2 }]
      }
      yield* oldRow(workspace, {
        businessObject: "crm/deal",
        id: deal,
        operation: "created",
        recordVersion: 1,
        record: dealValues
      })
      yield* hole(workspace)
      yield* oldRow(workspace, {
        businessObject: "crm/company",
        id: gone,
        operation: "deleted",
        recordVersion: 2,
        record: { name: "Gone" }
      })
      yield* oldRow(workspace, {
        businessObject: "crm/company",
        id: acme,
        operation: "updated",
        recordVersion: 2,
        changes: { name: { from: "Acme", to: "Acme Ltd" } }
      })
      yield* storedRecord(workspace, { businessObject: "crm/deal", id: deal, values: dealValues, version: 1 })

      // 0008: positions = seq; rows after it take theirs from the counter.
      yield* migrateSchema(workspace.schema, migrationsUpTo("0008_feed_positions"))
      yield* oldRow(workspace, {
        businessObject: "crm/company",
        id: acme,
        operation: "updated",
        recordVersion: 3,
        changes: { name: { from: "Acme Ltd", to: "Acme AS" }, website: { from: null, to: "https://acme.example" } },
        parentCorrelationId: randomUUID()
      })
      yield* storedRecord(workspace, {
        businessObject: "crm/company",
        id: acme,
        values: { name: "Acme AS", website: "https://acme.example" },
        version: 3
      })
      const before = yield* sql<{ position: string; seq: string }>`SELECT position::text AS position, seq::text AS seq
        FROM ${table} ORDER BY position`
      expect(before.map((row) => row.position)).toEqual(["1", "4", "5", "7", "8", "9"])

      // 0009, as a start-up runs it: only what the schema's migrations record lacks.
      yield* migrateSchema(workspace.schema, workspaceMigrations)
      const migrations = yield* sql<{
        name: string
      }>`SELECT name FROM ${sql(`${workspace.schema}.effect_sql_migrations`)}
        ORDER BY migration_id`
      expect(migrations.map((row) => row.name)).toEqual(
        Object.keys(workspaceMigrations).map((name) => name.replace(/^\d+_/, ""))
      )
      const chained = yield* sql<{ position: string; hash: string | null; salt: string | null }>`
        SELECT position::text AS position, encode(hash, 'hex') AS hash, encode(salt, 'hex') AS salt
        FROM ${table} ORDER BY position`
      expect(chained.every((row) => row.hash !== null && row.salt !== null)).toBe(true)
      const head = yield* readHead(workspace)
      expect(head).toEqual({ position: "9", hash: chained.at(-1)?.hash, chainedFrom: "9" })

      const migrated = yield* verifyLedger(workspace, [
        { position: 5n, hash: Buffer.from(chained[2]?.hash ?? "", "hex"), label: "a digest of the chained rows" }
      ])
      expect(migrated.chainFault).toBeNull()
      expect(migrated.recordFaults).toEqual([])
      expect(migrated.rows).toBe(6)

      // The write path goes on from the counter's head, gapless.
      yield* (yield* UnitOfWork).run(workspace, (yield* Records).update("crm/company", acme, { name: "Acme Group" }))
      const after = yield* verifyLedger(workspace, [])
      expect(verificationPassed(after)).toBe(true)
      expect(after.rows).toBe(7)
      const newHead = yield* readHead(workspace)
      expect(newHead.position).toBe("10")
      expect(newHead.chainedFrom).toBe("9")
      expect(newHead.hash).not.toBe(head.hash)
      const [last] = yield* sql<{ hash: string }>`SELECT encode(hash, 'hex') AS hash FROM ${table}
        WHERE position = 10`
      expect(last?.hash).toBe(newHead.hash)

      // The auditor's script agrees, gaps and all.
      const dir = yield* Effect.acquireRelease(
        Effect.sync(() => mkdtempSync(join(tmpdir(), "ledger-migrated-"))),
        (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
      )
      const exported = join(dir, "feed.ndjson")
      expect(Exit.isSuccess((yield* runCli("feed", "export", "--workspace", workspace.slug, exported)).exit)).toBe(true)
      const { privateKey, publicKey } = generateKeyPairSync("ed25519")
      const key = { privateKey, publicKey: publicKeyText(publicKey), source: { kind: "configured" } } as const
      writeFileSync(join(dir, "digests.ndjson"), digestLine(signDigest(digestOf(workspace, newHead, new Date()), key)))
      writeFileSync(join(dir, "key.pem"), publicKey.export({ type: "spki", format: "pem" }))
      const audited = yield* runProcess(process.execPath, [
        join(__dirname, "../../scripts/verify-ledger-export.mjs"),
        ...["--export", exported, "--digest", join(dir, "digests.ndjson"), "--public-key", join(dir, "key.pem")]
      ])
      expect(audited.stdout).toContain(`7 rows, head position 10 hash ${newHead.hash}`)
      expect(audited.stdout).toContain("3 positions have no row")
      expect(audited.code).toBe(0)

      // The permanence trigger of 0009.
      const permanent = "audit entries are permanent"
      const valuesOnly = "an erasure changes only the values of an audit entry"
      expect(yield* refusal((sql) => sql`UPDATE ${table} SET record = record WHERE position = 5`)).toBe(permanent)
      const erasing = "SET LOCAL abs.audit_erasure = 'on'"
      for (const change of [
        "at = at + interval '1 second'",
        "position = position + 100",
        "hash = sha256(hash)",
        "id = gen_random_uuid()",
        `actor = '{"kind":"user","id":"u-forged","name":"F","email":"f@example.com"}'::jsonb`,
        "correlation_id = gen_random_uuid()",
        "parent_correlation_id = gen_random_uuid()",
        "business_object = 'crm/activity'",
        "business_object_id = 'x'",
        "record_version = 99",
        "operation = 'deleted'",
        `cause = '{"kind":"action","action":"crm/deal/close"}'::jsonb`
      ]) {
        expect(
          yield* refusal((sql) => sql`UPDATE ${table} SET ${sql.literal(change)} WHERE position = 5`, erasing),
          change
        ).toBe(valuesOnly)
      }
      for (const statement of [
        `DELETE FROM ${workspace.table("audit_entries")} WHERE position = 10`,
        `TRUNCATE ${workspace.table("audit_entries")}`
      ]) {
        expect(yield* refusal((sql) => sql.unsafe(statement)), statement).toBe(permanent)
        expect(yield* refusal((sql) => sql.unsafe(statement), erasing), statement).toBe(permanent)
      }
      expect((yield* verifyLedger(workspace, [])).rows).toBe(7)

      // What an erasure may change, it can: and the values changed without their commitments break the chain there.
      yield* sql.withTransaction(
        Effect.andThen(
          sql.unsafe(erasing),
          sql`UPDATE ${table} SET record = '{"title":"Forged"}'::jsonb, changes = changes, salt = salt,
            erased_salts = '{}'::jsonb WHERE position = 5`
        )
      )
      const [edited] = yield* sql<{ title: string }>`SELECT record->>'title' AS title FROM ${table} WHERE position = 5`
      expect(edited?.title).toBe("Forged")
      expect((yield* verifyLedger(workspace, [])).chainFault).toMatchObject({ kind: "changed", position: 5n })
    }).pipe(withActor(someone))
  )
})
