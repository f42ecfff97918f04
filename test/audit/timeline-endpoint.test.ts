import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Option, Schema } from "effect"
import { decodeCursor } from "../../src/audit/Cursor"
import { Timeline } from "../../src/audit/Timeline"
import { Roles } from "../../src/auth/Roles"
import { TimelinePage } from "../../src/api/AuditEntry"
import type { Workspace } from "../../src/api/Workspace"
import { clientFor, createRecord, recordsOf, signedInMember, timelineCall, timelineOf } from "../support/api"
import type { Client } from "../support/api"
import { refusal } from "../support/apiCaller"
import { baseUrl, freshWorkspace, TestApp } from "../support/TestApp"

const deal = "crm/deal"
/** The raw path of a deal's timeline, for queries the contract would not send (a limit out of range, not a number). */
const rawTimelinePath = (id: string, query: string) =>
  `/api/audit/business-object/${encodeURIComponent(deal)}/${id}${query}`

/** `at` as the service prints it: ISO-8601 UTC, six fractional digits. */
const isoMicrosPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/
const atAsText = `to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`

/**
 * Inserts `count` audit rows (all `updated`) for one record straight into the
 * workspace's table, bypassing units of work. `at` is an SQL expression of
 * the series value `i` (our own constant, never user input). Rows go in a
 * shuffled order of `i`, so `seq` does not follow `at`.
 */
const insertAuditRows = (
  workspace: Workspace,
  options: {
    readonly businessObjectId: string
    readonly count: number
    readonly at?: string
    readonly businessObject?: string
  }
) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const at = sql.literal(options.at ?? "now() - i * interval '1 second'")
    yield* sql`INSERT INTO ${sql(workspace.table("audit_entries"))}
        (id, at, actor, correlation_id, business_object, business_object_id, operation, cause, changes)
      SELECT gen_random_uuid(), ${at}, '{"kind":"system","name":"seeder:test"}'::jsonb, gen_random_uuid(),
        ${options.businessObject ?? deal}, ${options.businessObjectId}, 'updated', NULL,
        jsonb_build_object('title', jsonb_build_object('from', 'v' || (i - 1), 'to', 'v' || i))
      FROM generate_series(1, ${options.count}::int) AS i
      ORDER BY (i * 7919) % ${options.count}::int, i`
  })

/**
 * The timeline of one record as the database orders it: commit order, seq
 * desc. The column is qualified on purpose: a bare `ORDER BY seq` would sort
 * by the text output column of the same name (seq "9" after "10").
 */
const expectedOrder = (workspace: Workspace, businessObjectId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ readonly id: string; readonly at: string; readonly seq: string }>`
      SELECT id::text AS id, ${sql.literal(atAsText)} AS at, seq::text AS seq
      FROM ${sql(workspace.table("audit_entries"))} AS e
      WHERE business_object = ${deal} AND business_object_id = ${businessObjectId}
      ORDER BY e.seq DESC`
  )

const auditRowCount = (workspace: Workspace) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ readonly n: string }>`SELECT count(*)::text AS n FROM ${sql(workspace.table("audit_entries"))}`,
      (rows) => Number(rows[0]?.n)
    )
  )

/** Follows nextCursor from the first page until it is null; every page as served. */
const allPages = (client: Client, businessObjectId: string, limit: number) =>
  Effect.gen(function* () {
    const pages: Array<TimelinePage> = []
    let cursor: string | null = null
    do {
      const page: TimelinePage = yield* timelineOf(client, deal, businessObjectId, {
        limit,
        ...(cursor === null ? {} : { cursor })
      })
      pages.push(page)
      cursor = page.nextCursor
      if (pages.length > 1_000) throw new Error("the timeline does not end")
    } while (cursor !== null)
    return pages
  })

const baseKeys = [
  "actor",
  "at",
  "businessObject",
  "businessObjectId",
  "cause",
  "correlationId",
  "id",
  "operation",
  "titles"
]
/** Rule 1 and rule 9: exactly what the verb determines, no null padding, never `seq`. */
const keysFor = (operation: string) => {
  switch (operation) {
    case "created":
    case "deleted":
      return [...baseKeys, "record"].sort()
    case "updated":
      return [...baseKeys, "changes"].sort()
    default:
      return [...baseKeys].sort()
  }
}

const errorBody = (tag: string) => expect.objectContaining({ _tag: tag, message: expect.any(String) })

/** A JSON plan's nodes, depth first. */
interface PlanNode {
  readonly nodeType: string
  readonly indexName: string | undefined
  readonly indexCond: string | undefined
}
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null
const planNodes = (value: unknown): Array<PlanNode> => {
  if (Array.isArray(value)) return value.flatMap(planNodes)
  if (!isObject(value)) return []
  const here: Array<PlanNode> =
    typeof value["Node Type"] === "string"
      ? [
          {
            nodeType: value["Node Type"],
            indexName: typeof value["Index Name"] === "string" ? value["Index Name"] : undefined,
            indexCond: typeof value["Index Cond"] === "string" ? value["Index Cond"] : undefined
          }
        ]
      : []
  return [...here, ...planNodes(value.Plan), ...planNodes(value.Plans)]
}

layer(TestApp, { excludeTestServices: true })("GET /api/audit/business-object/:businessObject/:id", (it) => {
  it.effect(
    "keyset paging follows seq (commit order), not at: every row once, seq desc, old cursors still page on",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const workspace = yield* freshWorkspace
        const { client } = yield* signedInMember(base, workspace)
        const recordId = crypto.randomUUID()
        // 120 rows inserted in a shuffled order of i, with `at` a function of i:
        // `at` and seq disagree, and several rows share one exact instant.
        yield* insertAuditRows(workspace, {
          businessObjectId: recordId,
          count: 120,
          at: "'2026-03-14T09:26:53.589Z'::timestamptz + (i % 3) * interval '1 millisecond' + (i % 4) * interval '211 microseconds'"
        })
        // Rows for a neighbouring record must not leak into this timeline.
        yield* insertAuditRows(workspace, { businessObjectId: crypto.randomUUID(), count: 15 })

        const expected = yield* expectedOrder(workspace, recordId)
        expect(expected).toHaveLength(120)
        // The test is meaningful: seq order is not at order.
        const ats = expected.map((row) => row.at)
        expect([...ats].sort().reverse()).not.toEqual(ats)
        const seqs = expected.map((row) => BigInt(row.seq))
        seqs.slice(1).forEach((seq, index) => {
          expect(seq < (seqs[index] ?? 0n)).toBe(true)
        })

        const pages = yield* allPages(client, recordId, 7)
        expect(pages).toHaveLength(Math.ceil(120 / 7))
        pages.forEach((page, index) => {
          const last = index === pages.length - 1
          expect(page.entries).toHaveLength(last ? 120 - 7 * (pages.length - 1) : 7)
          if (last) expect(page.nextCursor).toBeNull()
          else expect(page.nextCursor).toMatch(/^[A-Za-z0-9_-]+$/)
        })
        const served = pages.flatMap((page) => page.entries)
        expect(served.map((entry) => entry.id)).toEqual(expected.map((row) => row.id))
        expect(new Set(served.map((entry) => entry.id)).size).toBe(120)
        expect(served.map((entry) => entry.at)).toEqual(expected.map((row) => row.at))
        for (const entry of served) {
          expect(entry.at).toMatch(isoMicrosPattern)
          expect(entry.businessObjectId).toBe(recordId)
        }

        // A cursor of the earlier form, [at, seq], names its last row by the same seq: paging goes on after it.
        const tenth = expected[9]
        if (tenth === undefined) throw new Error("no tenth row")
        const oldCursor = Buffer.from(JSON.stringify([tenth.at, tenth.seq])).toString("base64url")
        const afterOld = yield* timelineOf(client, deal, recordId, { limit: 5, cursor: oldCursor })
        expect(afterOld.entries.map((entry) => entry.id)).toEqual(expected.slice(10, 15).map((row) => row.id))
      })
  )

  it.effect("rows written by real units come back newest first, with exactly the keys of their verb and no seq", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const { user, client } = yield* signedInMember(base, workspace)
      const created = yield* createRecord(client, deal, { title: "Fleet renewal", stage: "lead", amount: "1200.50" })
      const patches = [
        { stage: "qualified" },
        { amount: "1300.00", closeDate: "2026-06-30" },
        { title: "Fleet renewal 2026" }
      ]
      const deals = recordsOf(client, deal)
      for (const values of patches) yield* deals.update(created.id, values)
      // A PATCH that changes nothing writes no row (rule 2).
      yield* deals.update(created.id, { stage: "qualified" })
      yield* deals.archive(created.id)
      yield* deals.restore(created.id)
      yield* deals.remove(created.id)

      // timelineOf checks the wire body is the contract's shape exactly: nothing more (never `seq`), no null padding.
      const page = yield* timelineOf(client, deal, created.id)
      expect(page.nextCursor).toBeNull()
      expect(page.entries.map((entry) => entry.operation)).toEqual([
        "deleted",
        "restored",
        "archived",
        "updated",
        "updated",
        "updated",
        "created"
      ])
      for (const entry of page.entries) {
        expect(Object.keys(entry).sort()).toEqual(keysFor(entry.operation))
        expect(entry).not.toHaveProperty("seq")
        expect(entry.at).toMatch(isoMicrosPattern)
        expect(entry.actor).toEqual({ kind: "user", id: user.id, name: user.name, email: user.email })
        expect(entry.businessObject).toBe(deal)
        expect(entry.businessObjectId).toBe(created.id)
        expect(entry.cause).toBeNull()
        expect(entry.id).not.toBe(created.id)
      }
      // Newest first: each unit committed after the one below it.
      const ats = page.entries.map((entry) => entry.at)
      expect([...ats].sort().reverse()).toEqual(ats)
      // One unit per request: seven correlation ids.
      expect(new Set(page.entries.map((entry) => entry.correlationId)).size).toBe(7)
      const updates = page.entries.filter((entry) => entry.operation === "updated")
      expect(updates.map((entry) => entry.changes)).toEqual([
        { title: { from: "Fleet renewal", to: "Fleet renewal 2026" } },
        { amount: { from: "1200.50", to: "1300.00" }, closeDate: { from: null, to: "2026-06-30" } },
        { stage: { from: "lead", to: "qualified" } }
      ])
      expect(page.entries.at(-1)?.record).toEqual({ title: "Fleet renewal", stage: "lead", amount: "1200.50" })
      expect(page.entries[0]?.record).toEqual({
        title: "Fleet renewal 2026",
        stage: "qualified",
        amount: "1300.00",
        closeDate: "2026-06-30"
      })
    })
  )

  it.effect("limit: default 50, clamped into 1..200, 400 when not an integer", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const { client } = yield* signedInMember(base, workspace)
      const sixty = crypto.randomUUID()
      const many = crypto.randomUUID()
      yield* insertAuditRows(workspace, { businessObjectId: sixty, count: 60 })
      yield* insertAuditRows(workspace, { businessObjectId: many, count: 250 })

      const first = yield* timelineOf(client, deal, sixty)
      expect(first.entries).toHaveLength(50)
      expect(first.nextCursor).not.toBeNull()
      const second = yield* timelineOf(client, deal, sixty, { cursor: first.nextCursor ?? "" })
      expect(second.entries).toHaveLength(10)
      expect(second.nextCursor).toBeNull()

      // Limits out of range, which the contract's client refuses to send: the server clamps them.
      const outOfRange = (limit: number) =>
        Effect.map(client.get(rawTimelinePath(many, `?limit=${limit}`)), (response) => {
          expect(response.status, `limit=${limit}`).toBe(200)
          return Schema.decodeUnknownSync(TimelinePage)(response.body)
        })
      const zero = yield* outOfRange(0)
      expect(zero.entries).toHaveLength(1)
      expect(zero.nextCursor).not.toBeNull()
      const negative = yield* outOfRange(-3)
      expect(negative.entries).toHaveLength(1)
      const huge = yield* outOfRange(500)
      expect(huge.entries).toHaveLength(200)
      expect(huge.nextCursor).not.toBeNull()
      const exact = yield* timelineOf(client, deal, many, { limit: 200 })
      expect(exact.entries.map((entry) => entry.id)).toEqual(huge.entries.map((entry) => entry.id))
      const rest = yield* timelineOf(client, deal, many, { limit: 200, cursor: huge.nextCursor ?? "" })
      expect(rest.entries).toHaveLength(50)
      expect(rest.nextCursor).toBeNull()

      const before = yield* auditRowCount(workspace)
      for (const limit of ["abc", "1.5", "", "12abc"]) {
        const response = yield* client.get(rawTimelinePath(many, `?limit=${limit}`))
        expect(response.status, `limit=${limit}`).toBe(400)
        expect(response.headers.get("content-type")).toContain("application/json")
        expect(response.body).toEqual(
          expect.objectContaining({ _tag: expect.any(String), message: expect.any(String) })
        )
      }
      expect(yield* auditRowCount(workspace)).toBe(before)
      expect((yield* timelineOf(client, deal, many, { limit: 3 })).entries).toHaveLength(3)
    })
  )

  it.effect("a cursor that is not one of ours is a 400 BadRequest", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const { client } = yield* signedInMember(base, workspace)
      const recordId = crypto.randomUUID()
      yield* insertAuditRows(workspace, { businessObjectId: recordId, count: 5 })
      const first = yield* timelineOf(client, deal, recordId, { limit: 2 })
      const cursor = first.nextCursor ?? ""
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/)
      // The real cursor works.
      expect((yield* timelineOf(client, deal, recordId, { limit: 2, cursor })).entries).toHaveLength(2)

      const b64 = (text: string) => Buffer.from(text).toString("base64url")
      const flip = (text: string, index: number) =>
        text.slice(0, index) + (text[index] === "A" ? "B" : "A") + text.slice(index + 1)
      const tampered = [
        flip(cursor, 0), // `["` no longer
        flip(cursor, cursor.length - 1), // the closing `"]` broken
        cursor.slice(0, -4), // truncated
        `${cursor}!`, // not base64url
        "garbage",
        "%00%01",
        b64("not json"),
        b64("{}"),
        b64("[]"),
        b64('{"at":"2026-03-14T09:26:53.589211Z","seq":"5"}'),
        b64('["2026-03-14T09:26:53.589211Z"]'),
        b64('["2026-03-14T09:26:53.589211Z",5]'),
        b64('["2026-03-14T09:26:53.589211Z","0"]'),
        b64('["2026-03-14T09:26:53.589211Z","-5"]'),
        b64('["2026-03-14T09:26:53.589211Z","5","extra"]'),
        b64('["2026-03-14T09:26:53.589Z","5"]'), // milliseconds only
        b64('["2026-03-14 09:26:53.589211+00","5"]'),
        b64('["2026-02-30T00:00:00.000000Z","5"]'), // no such day
        b64('["2026-13-01T00:00:00.000000Z","5"]'),
        b64('["2026-03-14T25:00:00.000000Z","5"]'),
        b64('["infinity","5"]'),
        b64('["0"]'),
        b64("[5]"),
        b64('["5","6"]'),
        b64('["5",null]'),
        b64('"5"'),
        b64("5")
      ]
      for (const bad of tampered) {
        const response = yield* refusal(timelineCall(client, deal, recordId, { cursor: bad }))
        expect(response.status, `cursor ${bad}`).toBe(400)
        expect(response.body, `cursor ${bad}`).toEqual(errorBody("BadRequest"))
      }
    })
  )

  // Cursors of the right shape that PostgreSQL would still refuse.
  const refusedByPostgres = [
    ["a seq beyond bigint", '["9999999999999999999"]'],
    ["a seq beyond bigint, earlier form", '["2026-03-14T09:26:53.589211Z","9999999999999999999"]'],
    ["year 0000", '["0000-01-01T00:00:00.000000Z","5"]']
  ] as const
  for (const [what, position] of refusedByPostgres) {
    it.effect(`a well-formed cursor PostgreSQL cannot take (${what}) is a 400, not a 500`, () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const workspace = yield* freshWorkspace
        const { client } = yield* signedInMember(base, workspace)
        const recordId = crypto.randomUUID()
        yield* insertAuditRows(workspace, { businessObjectId: recordId, count: 3 })
        const response = yield* refusal(
          timelineCall(client, deal, recordId, { cursor: Buffer.from(position).toString("base64url") })
        )
        expect(response.status, `cursor ${position}: ${JSON.stringify(response.body)}`).toBe(400)
        expect(response.body).toEqual(errorBody("BadRequest"))
      })
    )
  }

  it.effect(
    "404 for an unknown or unencoded business object, 403 without read, empty page for a record with no rows",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const workspace = yield* freshWorkspace
        const { client } = yield* signedInMember(base, workspace)
        const recordId = crypto.randomUUID()
        yield* insertAuditRows(workspace, { businessObjectId: recordId, count: 3 })

        const unknown = yield* refusal(timelineCall(client, "crm/nothing", recordId))
        expect(unknown.status).toBe(404)
        expect(unknown.body).toEqual({
          _tag: "NotFound",
          message: "unknown business object: crm/nothing",
          requestId: expect.any(String)
        })
        // Deliberately against the contract: the business object not encoded into one segment.
        const unencoded = yield* client.get(`/api/audit/business-object/crm/deal/${recordId}`)
        expect(unencoded.status).toBe(404)
        // The same path, encoded, is the timeline.
        expect((yield* timelineOf(client, deal, recordId)).entries).toHaveLength(3)

        const empty = yield* timelineCall(client, deal, crypto.randomUUID())
        expect(empty.status).toBe(200)
        expect(empty.json).toEqual({ entries: [], nextCursor: null })
        const notAUuid = yield* timelineCall(client, deal, "not-a-record-id")
        expect(notAUuid.status).toBe(200)
        expect(notAUuid.json).toEqual({ entries: [], nextCursor: null })

        yield* (yield* Roles).grant(workspace, "company-reader", "crm/company", "read")
        const reader = yield* signedInMember(base, workspace, "company-reader")
        const denied = yield* refusal(timelineCall(reader.client, deal, recordId))
        expect(denied.status).toBe(403)
        expect(denied.body).toEqual({
          _tag: "Forbidden",
          message: `user ${reader.user.name} may not read crm/deal`,
          requestId: expect.any(String)
        })
        // The grant it holds does open the other business object's timelines.
        const company = yield* timelineCall(reader.client, "crm/company", recordId)
        expect(company.status).toBe(200)
        expect(company.json).toEqual({ entries: [], nextCursor: null })

        const anonymous = yield* refusal(timelineCall(clientFor(base, ""), deal, recordId))
        expect(anonymous.status).toBe(401)
        expect(anonymous.body).toEqual(errorBody("Unauthorized"))
      })
  )

  it.effect("a page, first or after a cursor, is one range scan of audit_entries_timeline with no sort", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const sql = yield* SqlClient.SqlClient
      const timeline = yield* Timeline
      const workspace = yield* freshWorkspace
      const { client } = yield* signedInMember(base, workspace)
      // 20,000 rows over 50 records, 400 each.
      yield* sql`INSERT INTO ${sql(workspace.table("audit_entries"))}
          (id, at, actor, correlation_id, business_object, business_object_id, operation, record)
        SELECT gen_random_uuid(), '2026-01-01T00:00:00Z'::timestamptz + i * interval '7 microseconds',
          '{"kind":"system","name":"seeder:test"}'::jsonb, gen_random_uuid(),
          ${deal}, 'record-' || (i % 50), 'created', jsonb_build_object('title', 'deal ' || i)
        FROM generate_series(1, 20000) AS i`
      yield* sql`ANALYZE ${sql(workspace.table("audit_entries"))}`

      const recordId = "record-7"
      const firstPage = yield* timelineOf(client, deal, recordId)
      expect(firstPage.entries).toHaveLength(50)
      const cursor = firstPage.nextCursor
      expect(cursor).not.toBeNull()
      const after = decodeCursor(cursor ?? "")
      expect(Option.isSome(after)).toBe(true)

      for (const position of [Option.none(), after]) {
        // The statement the service runs for a page of 50 (it asks one row more).
        const [text, params] = timeline.compiledQuery(workspace, deal, recordId, position, 51)
        const rows = yield* sql.unsafe<Record<string, unknown>>(`EXPLAIN (FORMAT JSON) ${text}`, params)
        const nodes = planNodes(rows.flatMap((row) => Object.values(row)))
        const scans = nodes.filter(
          (node) =>
            (node.nodeType === "Index Scan" || node.nodeType === "Index Only Scan") &&
            node.indexName === "audit_entries_timeline"
        )
        expect(scans, JSON.stringify(nodes)).toHaveLength(1)
        expect(
          nodes.filter((node) => /Sort/.test(node.nodeType)),
          JSON.stringify(nodes)
        ).toEqual([])
        expect(nodes.filter((node) => node.nodeType === "Seq Scan" || node.nodeType === "Bitmap Heap Scan")).toEqual([])
        // The cursor is part of the index condition, not a filter: page 200 starts where it is.
        if (Option.isSome(position)) expect(scans[0]?.indexCond).toMatch(/\(seq < /)
      }
    })
  )
})
