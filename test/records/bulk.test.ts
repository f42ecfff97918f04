import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Queue } from "effect"
import { BulkWrite } from "../../src/api/BulkWrite"
import type { BulkItem } from "../../src/api/BulkWrite"
import type { Workspace } from "../../src/api/Workspace"
import { Roles } from "../../src/auth/Roles"
import { BroadcastBus } from "../../src/broadcast/BroadcastBus"
import { verificationPassed, verifyLedger } from "../../src/ledger/Verification"
import { createRecord, recordsOf, signedInMember } from "../support/api"
import type { Client } from "../support/api"
import { refusal, typePath } from "../support/apiCaller"
import { subscribeQueue } from "../support/hintQueue"
import { baseUrl, freshWorkspace, TestApp } from "../support/TestApp"

/**
 * `POST /api/records/:ns/:name/bulk` (docs/writes.md, "Bulk writes"): up to
 * 1,000 creates and updates in one unit of work, all or none.
 */

const deal = "crm/deal"

const bulk = (client: Client, items: ReadonlyArray<BulkItem>, idempotencyKey?: string, businessObject = deal) =>
  client.call((api) =>
    api.records.bulk({
      params: typePath(businessObject),
      payload: new BulkWrite({ items }),
      headers: idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey }
    })
  )

const counts = (workspace: Workspace) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ records: number; audit: number; keys: number }>`SELECT
        (SELECT count(*)::int FROM ${sql(workspace.table("records"))}) AS records,
        (SELECT count(*)::int FROM ${sql(workspace.table("audit_entries"))}) AS audit,
        (SELECT count(*)::int FROM ${sql(workspace.table("idempotency_keys"))}) AS keys`.pipe(
      Effect.map((rows) => rows[0]),
      Effect.orDie
    )
  )

const member = (workspace: Workspace, role = "admin") =>
  Effect.flatMap(baseUrl, (base) => signedInMember(base, workspace, role))

/** The next hint is the one of `id`: nothing was published in between. */
const nextHintIs = (hints: Queue.Dequeue<{ readonly data: { readonly businessObjectId: string } }>, id: string) =>
  Effect.map(Queue.take(hints).pipe(Effect.timeout("5 seconds"), Effect.orDie), (hint) =>
    expect(hint.data.businessObjectId).toBe(id)
  )

/** Takes hints until the one of `id`: what was published before it is behind. */
const drainUntil = (hints: Queue.Dequeue<{ readonly data: { readonly businessObjectId: string } }>, id: string) =>
  Queue.take(hints).pipe(
    Effect.timeout("5 seconds"),
    Effect.orDie,
    Effect.repeat({ until: (hint) => hint.data.businessObjectId === id })
  )

const creates = (n: number, title = (i: number) => `Deal ${i}`): Array<BulkItem> =>
  Array.from({ length: n }, (_, i) => ({ create: { title: title(i), lineItems: [{ product: "Kiosk", quantity: 1 }] } }))

layer(TestApp, { excludeTestServices: true })("bulk writes", (it) => {
  it.effect(
    "creates and updates in one unit: the records in item order, one correlation id and one `at`, an audit row and a hint each",
    () =>
      Effect.gen(function* () {
        const workspace = yield* freshWorkspace
        const { client } = yield* member(workspace)
        const company = yield* createRecord(client, "crm/company", { name: "Acme" })
        const existing = yield* createRecord(client, deal, { title: "Old" })
        const hints = yield* subscribeQueue(yield* BroadcastBus, workspace.id)
        const before = yield* createRecord(client, "crm/company", { name: "Before" })
        yield* drainUntil(hints, before.id)

        const answer = yield* bulk(client, [
          ...creates(2),
          { update: { id: existing.id, values: { stage: "open" }, ifMatch: 1 } },
          { create: { title: "Linked", company: company.id } }
        ])
        expect(answer.status).toBe(200)
        const written = answer.body.records
        expect(written.map((record) => [record.version, record.etag])).toEqual([
          [1, '"1"'],
          [1, '"1"'],
          [2, '"2"'],
          [1, '"1"']
        ])
        expect(written[2]?.id).toBe(existing.id)
        const deals = recordsOf(client, deal)
        expect((yield* deals.get(written[0]?.id ?? "")).body.values).toEqual({
          title: "Deal 0",
          lineItems: [{ id: expect.any(String), product: "Kiosk", quantity: 1 }]
        })
        expect((yield* deals.get(existing.id)).body.values).toEqual({ title: "Old", stage: "open" })

        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ id: string; operation: string; correlationId: string; at: string }>`
        SELECT business_object_id::text AS id, operation, correlation_id::text AS correlation_id, at::text AS at
        FROM ${sql(workspace.table("audit_entries"))} WHERE business_object_id IN ${sql.in(written.map((r) => r.id))}
        ORDER BY seq`
        // The existing record's own birth, then the unit's rows.
        expect(rows.map((row) => [row.id, row.operation])).toEqual([
          [existing.id, "created"],
          [written[0]?.id, "created"],
          [written[1]?.id, "created"],
          [existing.id, "updated"],
          [written[3]?.id, "created"]
        ])
        const unit = rows.slice(1)
        expect(new Set(unit.map((row) => row.correlationId)).size).toBe(1)
        expect(new Set(unit.map((row) => row.at)).size).toBe(1)
        // Each row's hash and snapshot (taken from the values written, not read back) match the records as stored.
        const ledger = yield* verifyLedger(workspace, [])
        expect(ledger.chainFault).toBeNull()
        expect(ledger.recordFaults).toEqual([])
        expect(verificationPassed(ledger)).toBe(true)

        const hinted = yield* Effect.forEach(written, () =>
          Queue.take(hints).pipe(Effect.timeout("5 seconds"), Effect.orDie)
        )
        expect(hinted.map((hint) => hint.data.businessObjectId).sort()).toEqual(
          written.map((record) => record.id).sort()
        )
        // Exactly one each: the next hint is the next write's.
        const after = yield* createRecord(client, "crm/company", { name: "After" })
        yield* nextHintIs(hints, after.id)
      })
  )

  it.effect("one bad item: 422 listing every refused item, nothing written, no audit row, no hint", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const { client } = yield* member(workspace)
      const existing = yield* createRecord(client, deal, { title: "Old" })
      yield* recordsOf(client, deal).update(existing.id, { stage: "open" })
      const hints = yield* subscribeQueue(yield* BroadcastBus, workspace.id)
      const marker = yield* createRecord(client, "crm/company", { name: "Before" })
      yield* drainUntil(hints, marker.id)
      const before = yield* counts(workspace)

      const refused = yield* refusal(
        bulk(client, [
          ...creates(3),
          { create: { title: "Bad amount", amount: 12 } },
          { create: { stage: "open" } },
          { update: { id: existing.id, values: { title: "Stale" }, ifMatch: '"1"' } },
          { update: { id: "0190a0e8-0000-7000-8000-000000000000", values: { title: "Nobody" } } },
          { create: { title: "Fine" } },
          { create: { title: "Unknown field", colour: "red" } }
        ])
      )
      expect(refused.status).toBe(422)
      expect(refused.body).toEqual({
        _tag: "BulkRejected",
        message: expect.stringMatching(/^5 of 9 items refused, nothing was written; the first, item 3: /),
        requestId: expect.any(String),
        items: [
          {
            index: 3,
            status: 400,
            _tag: "BadRequest",
            message: "invalid values for crm/deal: amount: Expected string, actual 12"
          },
          {
            index: 4,
            status: 422,
            _tag: "UnprocessableEntity",
            message: "invalid values for crm/deal: title: a value is required"
          },
          {
            index: 5,
            status: 412,
            _tag: "PreconditionFailed",
            message: `the crm/deal record ${existing.id} is at version 2, not 1: nothing was written`,
            currentVersion: 2
          },
          {
            index: 6,
            status: 404,
            _tag: "NotFound",
            message: "no crm/deal record 0190a0e8-0000-7000-8000-000000000000"
          },
          {
            index: 8,
            status: 400,
            _tag: "BadRequest",
            message: expect.stringContaining("colour: unknown field")
          }
        ]
      })
      expect(yield* counts(workspace)).toEqual(before)
      expect((yield* recordsOf(client, deal).get(existing.id)).body.version).toBe(2)
      // The refused request published nothing: the next hint is the next write's.
      const after = yield* createRecord(client, "crm/company", { name: "After" })
      yield* nextHintIs(hints, after.id)
    })
  )

  it.effect("Idempotency-Key: a retry gets the first answer, nothing is written twice; another body is a 422", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const { client } = yield* member(workspace)
      const items = creates(3)
      const first = yield* bulk(client, items, "bulk-1")
      const again = yield* bulk(client, items, "bulk-1")
      expect(again.json).toEqual(first.json)
      expect(first.headers.get("idempotency-replayed")).toBeNull()
      expect(again.headers.get("idempotency-replayed")).toBe("true")
      expect(yield* counts(workspace)).toEqual({ records: 3, audit: 3, keys: 1 })

      const other = yield* refusal(
        bulk(
          client,
          creates(3, (i) => `Other ${i}`),
          "bulk-1"
        )
      )
      expect(other.status).toBe(422)
      expect(other.body).toMatchObject({ _tag: "UnprocessableEntity" })
      expect(yield* counts(workspace)).toEqual({ records: 3, audit: 3, keys: 1 })

      // A refused bulk keeps no key: once fixed, its retry with the key runs.
      const bad = yield* refusal(bulk(client, [{ create: {} }], "bulk-2"))
      expect(bad.status).toBe(422)
      expect((yield* counts(workspace))?.keys).toBe(1)
    })
  )

  it.effect("permissions: a reader gets 403 for the whole request, nothing written", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      yield* (yield* Roles).grant(workspace, "deal-reader", deal, "read")
      const { client } = yield* member(workspace, "deal-reader")
      const refused = yield* refusal(bulk(client, creates(2)))
      expect(refused.status).toBe(403)
      expect(yield* counts(workspace)).toEqual({ records: 0, audit: 0, keys: 0 })
    })
  )

  it.effect("1,001 items (or none) are refused with a 422 naming the limit, nothing written", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const { client } = yield* member(workspace)
      const tooMany = yield* refusal(bulk(client, creates(1_001), "too-many"))
      expect(tooMany.status).toBe(422)
      expect(tooMany.body).toMatchObject({
        _tag: "UnprocessableEntity",
        message: "a bulk write takes 1 to 1,000 items, not 1,001: send them in several requests; nothing was written"
      })
      const none = yield* refusal(bulk(client, []))
      expect(none.status).toBe(422)
      expect(yield* counts(workspace)).toEqual({ records: 0, audit: 0, keys: 0 })

      // 1,000 is fine, in one unit.
      const full = yield* bulk(client, creates(1_000))
      expect(full.body.records.length).toBe(1_000)
      expect(yield* counts(workspace)).toEqual({ records: 1_000, audit: 1_000, keys: 0 })
    })
  )
})
