import { SqlClient } from "effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { Workspace } from "../../src/api/Workspace"
import { contentHash, genesisHash, linkHash } from "../../src/chain/rowHash"
import { ledgerRowOf } from "../../src/chain/storedRow"
import type { DigestClaim } from "../../src/chain/verifyChain"
import { withActor } from "../../src/context/Frames"
import type { StoredChainRow } from "../../src/ledger/LedgerRows"
import { eachLedgerBatch, readHead, saltsOf } from "../../src/ledger/LedgerRows"
import { verificationPassed, verifyLedger } from "../../src/ledger/Verification"
import { Records } from "../../src/records/Records"
import { UnitOfWork } from "../../src/unitOfWork/UnitOfWork"
import { freshWorkspace, TestServices } from "../support/TestApp"

/**
 * Tampering with a workspace's ledger behind the service's back, as a
 * superuser with the table's triggers off: each kind of change is named by
 * verification at the first position it touches (docs/ledger.md,
 * "Verification"). Each case on a workspace of its own, with the same
 * history written through the service.
 */

const someone = { kind: "user", id: "u-tamper", name: "Tamperer", email: "tamper@example.com" } as const

/** The ids of a collection's entries, in order. */
const entryIds = (value: unknown): Array<string> =>
  Array.isArray(value)
    ? value.flatMap((entry: unknown) =>
        entry !== null && typeof entry === "object" && "id" in entry && typeof entry.id === "string" ? [entry.id] : []
      )
    : []

/** A digest as verification takes it: the chain's head when it was read. */
const digestOfHead = (workspace: Workspace, label: string) =>
  Effect.map(
    readHead(workspace),
    (head): DigestClaim => ({ position: BigInt(head.position), hash: Buffer.from(head.hash, "hex"), label })
  )

/**
 * About 30 audit rows over companies, deals and an activity: creates,
 * updates of a nested struct and of a collection (an entry modified, one
 * added, one removed), a cascade of three rows in one unit, archive and
 * restore, two deletions. A digest is read a third of the way in.
 */
const writeHistory = (workspace: Workspace) =>
  Effect.gen(function* () {
    const records = yield* Records
    const units = yield* UnitOfWork
    const inUnit = <A, E, R>(effect: Effect.Effect<A, E, R>) => units.run(workspace, effect)
    const acme = yield* inUnit(records.create("crm/company", { name: "Acme", website: "https://acme.example" }))
    const globex = yield* inUnit(records.create("crm/company", { name: "Globex" }))
    const initech = yield* inUnit(records.create("crm/company", { name: "Initech" }))
    const deals = yield* Effect.forEach([0, 1, 2, 3], (i) =>
      inUnit(
        records.create("crm/deal", {
          title: `Deal ${i}`,
          stage: "lead",
          amount: "100.00",
          company: acme.id,
          address: { street: "Main 1", city: "Oslo" },
          lineItems: [{ product: "widget", quantity: 1, price: "10.00" }]
        })
      )
    )
    const early = yield* digestOfHead(workspace, "the early digest")
    for (const [i, deal] of deals.entries()) {
      yield* inUnit(
        records.update("crm/deal", deal.id, {
          title: `Deal ${i} (renamed)`,
          address: { street: "Main 1", city: "Bergen" }
        })
      )
      const [first] = entryIds(deal.values.lineItems)
      yield* inUnit(
        records.update("crm/deal", deal.id, {
          lineItems: [
            { id: first, product: "widget", quantity: 2 + i, price: "10.00" },
            { product: "gadget", quantity: 1, price: "25.50" }
          ]
        })
      )
    }
    // Won: the company counts it and logs an activity, three rows in one unit.
    const [won, second, third] = deals
    if (won === undefined || second === undefined || third === undefined) return yield* Effect.die("no deals")
    yield* inUnit(records.update("crm/deal", won.id, { stage: "won" }))
    yield* inUnit(records.archive("crm/company", globex.id))
    yield* inUnit(records.restore("crm/company", globex.id))
    yield* inUnit(records.update("crm/company", acme.id, { name: "Acme Corp" }))
    const doomed = yield* inUnit(records.create("crm/company", { name: "Doomed" }))
    yield* inUnit(records.remove("crm/company", doomed.id))
    for (const [i, deal] of deals.entries()) {
      yield* inUnit(records.update("crm/deal", deal.id, { amount: `${200 + i}.00`, title: `Deal ${i} (final)` }))
    }
    const kept = entryIds((yield* records.get(workspace, "crm/deal", second.id)).values.lineItems)
    yield* inUnit(
      records.update("crm/deal", second.id, {
        lineItems: [{ id: kept[1], product: "gadget", quantity: 1, price: "25.50" }]
      })
    )
    yield* inUnit(records.update("crm/company", initech.id, { website: "https://initech.example" }))
    yield* inUnit(records.remove("crm/deal", third.id))
    return { early, deal: won }
  })

interface AuditRow {
  readonly position: bigint
  readonly operation: string
  readonly businessObject: string
  readonly businessObjectId: string
  /** The top-level fields the row's diff names. */
  readonly changed: ReadonlyArray<string>
}

const auditRows = (workspace: Workspace) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{
      position: string
      operation: string
      businessObject: string
      businessObjectId: string
      changed: Array<string> | null
    }>`SELECT e.position::text AS position, e.operation, e.business_object AS "businessObject",
        e.business_object_id AS "businessObjectId",
        (SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(e.changes) AS k) AS changed
      FROM ${sql(workspace.table("audit_entries"))} AS e ORDER BY e.position`
    return rows.map((row): AuditRow => ({ ...row, position: BigInt(row.position), changed: row.changed ?? [] }))
  })

/** The first row (after `after`, if given) matching `match`: its position. */
const positionOf = (rows: ReadonlyArray<AuditRow>, match: (row: AuditRow) => boolean, after = 0n) => {
  const found = rows.find((row) => row.position > after && match(row))
  if (found === undefined) throw new Error("no such row in the history")
  return found.position
}

/** A fresh workspace with the history, its rows in feed order, and a digest read a third of the way in. */
const ledgerWithHistory = Effect.gen(function* () {
  const workspace = yield* freshWorkspace
  const written = yield* writeHistory(workspace)
  const rows = yield* auditRows(workspace)
  const last = rows[rows.length - 1]?.position ?? 0n
  return { workspace, rows, last, ...written }
})

/** Statements run by a superuser on the workspace's audit table with its triggers off (then on again). */
const behindTheService = <A, E, R>(workspace: Workspace, tamper: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const table = sql(workspace.table("audit_entries"))
    yield* sql`ALTER TABLE ${table} DISABLE TRIGGER USER`
    return yield* tamper.pipe(Effect.ensuring(Effect.orDie(sql`ALTER TABLE ${table} ENABLE TRIGGER USER`)))
  })

/** Moves the rows at positions > `from` by `by` (each in one step through negatives: positions are unique). */
const renumber = (workspace: Workspace, from: bigint, by: 1 | -1) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const table = sql(workspace.table("audit_entries"))
    yield* sql`UPDATE ${table} SET position = -(position + ${by}) WHERE position > ${from}`
    yield* sql`UPDATE ${table} SET position = -position WHERE position < 0`
  })

/** Verifies the workspace: its chain fault (kind and position), and whether the whole verification passed. */
const verdictOf = (workspace: Workspace, digests: ReadonlyArray<DigestClaim> = []) =>
  Effect.map(verifyLedger(workspace, digests), (report) => ({
    chain: report.chainFault === null ? null : { kind: report.chainFault.kind, position: report.chainFault.position },
    passed: verificationPassed(report),
    report
  }))

layer(TestServices, { excludeTestServices: true })("tampering with the ledger", (it) => {
  it.effect("an untouched workspace passes, with every row and record checked", () =>
    Effect.gen(function* () {
      const { workspace, rows, last, early } = yield* ledgerWithHistory
      expect(rows.length).toBeGreaterThanOrEqual(30)
      expect(rows.map((row) => row.position)).toEqual(rows.map((_, i) => BigInt(i + 1)))
      const ops = new Set(rows.map((row) => row.operation))
      expect([...ops].sort()).toEqual(["archived", "created", "deleted", "restored", "updated"])
      const head = yield* digestOfHead(workspace, "the last digest")
      const { passed, report } = yield* verdictOf(workspace, [early, head])
      expect(report.chainFault).toBeNull()
      expect(report.recordFaults).toEqual([])
      expect(passed).toBe(true)
      expect(report.rows).toBe(rows.length)
      expect(report.head.position).toBe(last)
      // Companies (one deleted) and deals (one deleted) and the activity the cascade logged.
      expect(report.records).toBe(3 + 3 + 1)

      // Read in batches (each asked for while the one before is handed over): every row once, in order; stopping
      // after the second batch reads no more.
      const seen: Array<string> = []
      yield* eachLedgerBatch(workspace, 7, (batch) => Effect.sync(() => seen.push(...batch.map((r) => r.position)) > 0))
      expect(seen).toEqual(rows.map((row) => String(row.position)))
      let batches = 0
      yield* eachLedgerBatch(workspace, 7, () => Effect.sync(() => ++batches < 2))
      expect(batches).toBe(2)
    }).pipe(withActor(someone))
  )

  it.effect("units of work committing while it runs: verification reads one snapshot, and still passes", () =>
    Effect.gen(function* () {
      const { workspace, rows } = yield* ledgerWithHistory
      const records = yield* Records
      const units = yield* UnitOfWork
      // Outside verification's transaction: a unit of work of its own, committed before the records are read.
      const services = yield* Effect.context<Records | UnitOfWork>()
      const commitMeanwhile = Effect.promise(() =>
        Effect.runPromiseWith(services)(
          units.run(workspace, records.create("crm/company", { name: "Meanwhile" })).pipe(withActor(someone))
        )
      )
      let committed = 0
      const report = yield* verifyLedger(workspace, [], () =>
        committed > 0 ? Effect.void : Effect.map(commitMeanwhile, () => void committed++)
      )
      expect(committed).toBe(1)
      expect(report.chainFault).toBeNull()
      expect(report.recordFaults).toEqual([])
      expect(report.rows).toBe(rows.length)
      expect((yield* auditRows(workspace)).length).toBe(rows.length + committed)
      expect(verificationPassed(yield* verifyLedger(workspace, []))).toBe(true)
    }).pipe(withActor(someone))
  )

  describe("a value changed in an audit row: `changed` at that row", () => {
    it.effect("a created row's snapshot", () =>
      Effect.gen(function* () {
        const { workspace, rows } = yield* ledgerWithHistory
        const sql = yield* SqlClient.SqlClient
        const at = positionOf(rows, (row) => row.operation === "created" && row.businessObject === "crm/deal")
        yield* behindTheService(
          workspace,
          sql`UPDATE ${sql(workspace.table("audit_entries"))} SET record = jsonb_set(record, '{amount}', '"999.00"')
            WHERE position = ${at}`
        )
        const { chain, passed } = yield* verdictOf(workspace)
        expect(chain).toEqual({ kind: "changed", position: at })
        expect(passed).toBe(false)
      }).pipe(withActor(someone))
    )

    it.effect("a diff's nested struct", () =>
      Effect.gen(function* () {
        const { workspace, rows } = yield* ledgerWithHistory
        const sql = yield* SqlClient.SqlClient
        const at = positionOf(rows, (row) => row.changed.includes("address"))
        yield* behindTheService(
          workspace,
          sql`UPDATE ${sql(workspace.table("audit_entries"))}
            SET changes = jsonb_set(changes, '{address,to,city}', '"Trondheim"') WHERE position = ${at}`
        )
        expect((yield* verdictOf(workspace)).chain).toEqual({ kind: "changed", position: at })
      }).pipe(withActor(someone))
    )

    it.effect("a diff's collection entry", () =>
      Effect.gen(function* () {
        const { workspace, rows } = yield* ledgerWithHistory
        const sql = yield* SqlClient.SqlClient
        const at = positionOf(rows, (row) => row.changed.includes("lineItems"))
        yield* behindTheService(
          workspace,
          sql`UPDATE ${sql(workspace.table("audit_entries"))}
            SET changes = jsonb_set(changes, '{lineItems,modified,0,changes,quantity,to}', '99') WHERE position = ${at}`
        )
        expect((yield* verdictOf(workspace)).chain).toEqual({ kind: "changed", position: at })
      }).pipe(withActor(someone))
    )

    it.effect("the last row's snapshot, and a row's actor and time", () =>
      Effect.gen(function* () {
        const { workspace, rows, last } = yield* ledgerWithHistory
        const sql = yield* SqlClient.SqlClient
        const table = sql(workspace.table("audit_entries"))
        yield* behindTheService(
          workspace,
          sql`UPDATE ${table} SET record = jsonb_set(record, '{title}', '"Never existed"') WHERE position = ${last}`
        )
        expect((yield* verdictOf(workspace)).chain).toEqual({ kind: "changed", position: last })
        const restored = positionOf(rows, (row) => row.operation === "restored")
        yield* behindTheService(
          workspace,
          sql`UPDATE ${table} SET actor = jsonb_set(actor, '{name}', '"Someone else"') WHERE position = ${restored}`
        )
        expect((yield* verdictOf(workspace)).chain).toEqual({ kind: "changed", position: restored })
        const archived = positionOf(rows, (row) => row.operation === "archived")
        yield* behindTheService(
          workspace,
          sql`UPDATE ${table} SET at = at - interval '1 hour' WHERE position = ${archived}`
        )
        expect((yield* verdictOf(workspace)).chain).toEqual({ kind: "changed", position: archived })
      }).pipe(withActor(someone))
    )
  })

  describe("a row deleted: `missing` at its position", () => {
    it.effect("the last row", () =>
      Effect.gen(function* () {
        const { workspace, last } = yield* ledgerWithHistory
        const sql = yield* SqlClient.SqlClient
        yield* behindTheService(
          workspace,
          sql`DELETE FROM ${sql(workspace.table("audit_entries"))} WHERE position = ${last}`
        )
        const { chain, passed } = yield* verdictOf(workspace)
        expect(chain).toEqual({ kind: "missing", position: last })
        expect(passed).toBe(false)
      }).pipe(withActor(someone))
    )

    it.effect("the last row, the counter moved back to the row before (its head left)", () =>
      Effect.gen(function* () {
        const { workspace, last } = yield* ledgerWithHistory
        const sql = yield* SqlClient.SqlClient
        yield* behindTheService(
          workspace,
          Effect.andThen(
            sql`DELETE FROM ${sql(workspace.table("audit_entries"))} WHERE position = ${last}`,
            sql`UPDATE ${sql(workspace.table("feed_position"))} SET position = position - 1`
          )
        )
        expect((yield* verdictOf(workspace)).chain).toEqual({ kind: "missing", position: last })
      }).pipe(withActor(someone))
    )

    it.effect("a row in the middle, the gap left", () =>
      Effect.gen(function* () {
        const { workspace, last } = yield* ledgerWithHistory
        const sql = yield* SqlClient.SqlClient
        const at = last / 2n
        yield* behindTheService(
          workspace,
          sql`DELETE FROM ${sql(workspace.table("audit_entries"))} WHERE position = ${at}`
        )
        expect((yield* verdictOf(workspace)).chain).toEqual({ kind: "missing", position: at })
      }).pipe(withActor(someone))
    )

    it.effect("a row in the middle, the later rows renumbered down to close the gap", () =>
      Effect.gen(function* () {
        const { workspace, last } = yield* ledgerWithHistory
        const sql = yield* SqlClient.SqlClient
        const at = last / 2n
        yield* behindTheService(
          workspace,
          Effect.andThen(
            sql`DELETE FROM ${sql(workspace.table("audit_entries"))} WHERE position = ${at}`,
            renumber(workspace, at, -1)
          )
        )
        expect((yield* verdictOf(workspace)).chain).toEqual({ kind: "missing", position: at })
      }).pipe(withActor(someone))
    )

    it.effect("the row before the last, the last renumbered into its place", () =>
      Effect.gen(function* () {
        const { workspace, last } = yield* ledgerWithHistory
        const sql = yield* SqlClient.SqlClient
        const at = last - 1n
        yield* behindTheService(
          workspace,
          Effect.andThen(
            sql`DELETE FROM ${sql(workspace.table("audit_entries"))} WHERE position = ${at}`,
            renumber(workspace, at, -1)
          )
        )
        expect((yield* verdictOf(workspace)).chain).toEqual({ kind: "missing", position: at })
      }).pipe(withActor(someone))
    )
  })

  describe("two rows' positions swapped: `reordered` at the first", () => {
    const swap = (workspace: Workspace, a: bigint, b: bigint) =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const table = sql(workspace.table("audit_entries"))
        yield* sql`UPDATE ${table} SET position = -1 WHERE position = ${a}`
        yield* sql`UPDATE ${table} SET position = ${a} WHERE position = ${b}`
        yield* sql`UPDATE ${table} SET position = ${b} WHERE position = -1`
      })

    it.effect("adjacent rows", () =>
      Effect.gen(function* () {
        const { workspace, last } = yield* ledgerWithHistory
        const at = last / 2n
        yield* behindTheService(workspace, swap(workspace, at, at + 1n))
        const { chain, passed } = yield* verdictOf(workspace)
        expect(chain).toEqual({ kind: "reordered", position: at })
        expect(passed).toBe(false)
      }).pipe(withActor(someone))
    )

    it.effect("rows apart", () =>
      Effect.gen(function* () {
        const { workspace, last } = yield* ledgerWithHistory
        const at = last / 3n
        yield* behindTheService(workspace, swap(workspace, at, at + 5n))
        expect((yield* verdictOf(workspace)).chain).toEqual({ kind: "reordered", position: at })
      }).pipe(withActor(someone))
    )
  })

  describe("a forged row inserted: `inserted` at its position", () => {
    /** A copy of the row at `from`, as a new row at `at`, with `hash` (SQL) as its hash. */
    const forge = (workspace: Workspace, from: bigint, at: bigint, hash: "made-up" | "none") =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const table = sql(workspace.table("audit_entries"))
        const forged = hash === "made-up" ? sql`sha256(gen_random_uuid()::text::bytea)` : sql`NULL::bytea`
        yield* sql`INSERT INTO ${table} (id, at, actor, correlation_id, parent_correlation_id, business_object,
            business_object_id, record_version, operation, cause, record, changes, position, salt, hash)
          SELECT gen_random_uuid(), at, actor, correlation_id, parent_correlation_id, business_object,
            business_object_id, record_version, operation, cause, record, changes, ${at}, salt, ${forged}
          FROM ${table} WHERE position = ${from}`
      })

    it.effect("at the end, with a made-up hash", () =>
      Effect.gen(function* () {
        const { workspace, last } = yield* ledgerWithHistory
        yield* behindTheService(workspace, forge(workspace, last, last + 1n, "made-up"))
        const { chain, passed } = yield* verdictOf(workspace)
        expect(chain).toEqual({ kind: "inserted", position: last + 1n })
        expect(passed).toBe(false)
      }).pipe(withActor(someone))
    )

    it.effect("in the middle, the later rows renumbered up, with a made-up hash or none", () =>
      Effect.gen(function* () {
        for (const hash of ["made-up", "none"] as const) {
          const { workspace, last } = yield* ledgerWithHistory
          const at = last / 2n
          yield* behindTheService(
            workspace,
            Effect.andThen(renumber(workspace, at - 1n, 1), forge(workspace, at + 3n, at, hash))
          )
          expect((yield* verdictOf(workspace)).chain, hash).toEqual({ kind: "inserted", position: at })
        }
      }).pipe(withActor(someone))
    )
  })

  it.effect("a record's values changed in its table: a record fault at its last audit row, the chain intact", () =>
    Effect.gen(function* () {
      const { workspace, rows, deal } = yield* ledgerWithHistory
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE ${sql(workspace.table("records"))} SET values = jsonb_set(values, '{amount}', '"1000000.00"')
        WHERE business_object = 'crm/deal' AND id = ${deal.id}`
      const { chain, passed, report } = yield* verdictOf(workspace)
      expect(chain).toBeNull()
      expect(passed).toBe(false)
      const lastOfDeal = rows.filter((row) => row.businessObjectId === deal.id).at(-1)?.position
      expect(report.recordFaults).toEqual([
        {
          kind: "record",
          position: lastOfDeal,
          businessObject: "crm/deal",
          id: deal.id,
          detail: "its values are not what its timeline replays to"
        }
      ])
    }).pipe(withActor(someone))
  )

  it.effect(
    "history rewritten consistently after a digest: the chain alone passes; the digest taken before names where",
    () =>
      Effect.gen(function* () {
        const { workspace, rows, early, deal } = yield* ledgerWithHistory
        const sql = yield* SqlClient.SqlClient
        const table = sql(workspace.table("audit_entries"))
        const before = yield* digestOfHead(workspace, "the last digest")
        // The deal's first rename, later renamed again: its timeline still replays to the record as stored.
        const at = positionOf(rows, (row) => row.businessObjectId === deal.id && row.changed.includes("title"))
        expect(at).toBeGreaterThan(early.position)
        yield* sql`DROP TRIGGER audit_entries_erasure_only ON ${table}`
        yield* sql`DROP TRIGGER audit_entries_are_permanent ON ${table}`
        yield* sql`UPDATE ${table} SET changes = jsonb_set(changes, '{title,to}', '"Deal 0 (forged)"')
          WHERE position = ${at}`
        // Every link from there recomputed with the ledger's own functions, and the counter's head moved.
        const stored: Array<StoredChainRow> = []
        yield* eachLedgerBatch(workspace, 1_000, (batch) => Effect.sync(() => stored.push(...batch) > 0))
        let previous = genesisHash(workspace.schema)
        const relinked: Array<{ position: string; hash: string }> = []
        for (const row of stored) {
          const position = BigInt(row.position)
          const hash =
            position < at
              ? Buffer.from(row.hash ?? "", "hex")
              : linkHash(previous, position, BigInt(row.atMicros), contentHash(ledgerRowOf(row), saltsOf(row)))
          if (position >= at) relinked.push({ position: row.position, hash: hash.toString("hex") })
          previous = hash
        }
        yield* sql`UPDATE ${table} AS e SET hash = decode(r.hash, 'hex')
          FROM jsonb_to_recordset(${JSON.stringify(relinked)}::jsonb) AS r(position bigint, hash text)
          WHERE e.position = r.position`
        yield* sql`UPDATE ${sql(workspace.table("feed_position"))} SET head = ${previous}`

        const alone = yield* verdictOf(workspace)
        expect(alone.chain).toBeNull()
        expect(alone.passed).toBe(true)
        expect(alone.report.head.hash).toBe(previous.toString("hex"))
        expect((yield* verdictOf(workspace, [early])).passed).toBe(true)
        expect((yield* verdictOf(workspace, [before])).chain).toEqual({ kind: "rewritten", position: 1n })
        const both = yield* verdictOf(workspace, [before, early])
        expect(both.chain).toEqual({ kind: "rewritten", position: early.position + 1n })
        expect(both.report.chainFault?.detail).toContain("the last digest")
      }).pipe(withActor(someone))
  )
})
