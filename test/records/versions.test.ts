import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Fiber, Schedule } from "effect"
import { Timeline } from "../../src/audit/Timeline"
import type { Workspace } from "../../src/api/Workspace"
import { holdInTransaction } from "../support/holdInTransaction"
import { clientFor, createRecord, expectStatus, signedInMember, timelineOf } from "../support/api"
import type { Client } from "../support/api"
import type { AuditEntry } from "../../src/api/AuditEntry"
import type { StoredRecord } from "../../src/api/StoredRecord"
import type { TestResponse } from "../support/http"
import { baseUrl, freshWorkspace, testApp } from "../support/TestApp"

/**
 * Optimistic concurrency over real HTTP and PostgreSQL (docs/writes.md,
 * "Versions and conflicts"): every record answer carries its version (field
 * and ETag); writes on one record honour `If-Match`; of two writers who read
 * the same version exactly one wins, the other gets 412 with what was
 * written since, and nothing is lost.
 */

const deal = "crm/deal"

/** Bodies as sent: these tests read raw answers (ETag, status) next to them. */
type EntryBody = typeof AuditEntry.Encoded
type VersionedBody = typeof StoredRecord.Encoded

interface StaleBody {
  readonly _tag: string
  readonly message: string
  readonly currentVersion: number | null
  readonly entries: ReadonlyArray<EntryBody>
  readonly moreEntries: boolean
}

const dealPath = (id: string) => `/api/records/${deal}/${id}`

/** The same signed-in caller, sending `If-Match: value`. */
const ifMatch = (client: Client, cookie: string, value: string) => clientFor(client.base, cookie, { "if-match": value })

const member = (workspace: Workspace) => Effect.flatMap(baseUrl, (base) => signedInMember(base, workspace))

const readDeal = (client: Client, id: string) =>
  Effect.map(client.get(dealPath(id)), (response) => {
    const body = expectStatus(200)(response) as VersionedBody
    expect(response.headers.get("etag")).toBe(`"${body.version}"`)
    return body
  })

/** Holds a row lock on a record in a transaction of its own until the returned effect runs. */
const lockRecord = (workspace: Workspace, id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    holdInTransaction(sql`SELECT 1 FROM ${sql(workspace.table("records"))} WHERE id = ${id} FOR UPDATE`)
  )

/** How many statements on the workspace's records wait for a row lock. */
const lockWaiters = (workspace: Workspace) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE wait_event_type = 'Lock' AND query LIKE ${`%"${workspace.schema}"."records"%FOR UPDATE%`}
        AND pid <> pg_backend_pid()`.pipe(
      Effect.map((rows) => rows[0]?.n ?? 0),
      Effect.orDie
    )
  )

const waitUntil = <R>(condition: Effect.Effect<boolean, never, R>) =>
  Effect.repeat(condition, { until: (holds) => holds, schedule: Schedule.spaced("10 millis") }).pipe(
    Effect.timeoutOrElse({ duration: "20 seconds", orElse: () => Effect.fail(new Error("condition never held")) }),
    Effect.orDie
  )

/**
 * Two writes in flight at once, both having read the same version: each is
 * held at the record's row lock (`first` queued before `second`) until both
 * wait there, then they are let go together. The row lock goes to `first`,
 * so `second` checks its `If-Match` right after `first` committed.
 */
const race = (
  workspace: Workspace,
  id: string,
  first: Effect.Effect<TestResponse>,
  second: Effect.Effect<TestResponse>
) =>
  Effect.gen(function* () {
    const release = yield* lockRecord(workspace, id)
    const a = yield* Effect.forkChild(first)
    yield* waitUntil(Effect.map(lockWaiters(workspace), (n) => n === 1))
    const b = yield* Effect.forkChild(second)
    yield* waitUntil(Effect.map(lockWaiters(workspace), (n) => n === 2))
    yield* release
    return [yield* Fiber.join(a), yield* Fiber.join(b)] as const
  })

const staleBody = (response: TestResponse) => expectStatus(412)(response) as StaleBody

const uuidv7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

// Long lock waits: the races hold writers at a row lock on purpose.
layer(testApp({ databaseLockTimeout: Duration.seconds(30) }), { excludeTestServices: true })(
  "record versions, ETag and If-Match",
  (it) => {
    it.effect("every record answer carries its version as field and ETag; each write that changes it adds one", () =>
      Effect.gen(function* () {
        const workspace = yield* freshWorkspace
        const { client } = yield* member(workspace)
        const created = yield* client.post(`/api/records/${deal}`, { values: { title: "Kiosk" } })
        expect(created.status).toBe(201)
        expect(created.headers.get("etag")).toBe('"1"')
        const id = (created.body as VersionedBody).id
        expect((created.body as VersionedBody).version).toBe(1)

        const patched = yield* client.patch(dealPath(id), { values: { title: "Kiosk 2" } })
        expect([patched.status, patched.headers.get("etag"), (patched.body as VersionedBody).version]).toEqual([
          200,
          '"2"',
          2
        ])
        // A PATCH that changes nothing writes nothing: the version stays.
        const same = yield* client.patch(dealPath(id), { values: { title: "Kiosk 2" } })
        expect(same.headers.get("etag")).toBe('"2"')
        const archived = yield* client.post(`${dealPath(id)}/archive`)
        expect(archived.headers.get("etag")).toBe('"3"')
        expect((yield* readDeal(client, id)).version).toBe(3)
        const list = expectStatus(200)(yield* client.get(`/api/records/${deal}`)) as {
          records: ReadonlyArray<VersionedBody>
        }
        expect(list.records.map((record) => record.version)).toEqual([3])
      })
    )

    it.effect("If-Match takes the ETag, the bare version and *; a stale one is 412 and writes nothing", () =>
      Effect.gen(function* () {
        const workspace = yield* freshWorkspace
        const { client, cookie } = yield* member(workspace)
        const { id } = yield* createRecord(client, deal, { title: "Kiosk" })
        const quoted = yield* ifMatch(client, cookie, '"1"').patch(dealPath(id), { values: { title: "A" } })
        const bare = yield* ifMatch(client, cookie, " 2 ").patch(dealPath(id), { values: { title: "B" } })
        const any = yield* ifMatch(client, cookie, "*").patch(dealPath(id), { values: { title: "C" } })
        expect([quoted, bare, any].map((response) => response.headers.get("etag"))).toEqual(['"2"', '"3"', '"4"'])

        const stale = staleBody(yield* ifMatch(client, cookie, '"2"').patch(dealPath(id), { values: { title: "D" } }))
        expect(stale._tag).toBe("PreconditionFailed")
        expect(stale.currentVersion).toBe(4)
        expect(stale.moreEntries).toBe(false)
        // What was written since version 2, oldest first, in the timeline's own shape.
        expect(stale.entries.map((entry) => entry.changes)).toEqual([
          { title: { from: "A", to: "B" } },
          { title: { from: "B", to: "C" } }
        ])
        const timeline = yield* timelineOf(client, deal, id)
        // A 412's rows as the timeline shows them, with the titles they name (docs/titles.md).
        expect(stale.entries).toEqual(timeline.entries.slice(0, 2).reverse())
        expect((yield* readDeal(client, id)).values.title).toBe("C")
      })
    )

    it.effect(
      "two clients read version v and both PATCH with If-Match v: one wins, the other gets 412 with the entry since v; nothing is lost",
      () =>
        Effect.gen(function* () {
          const workspace = yield* freshWorkspace
          const ann = yield* member(workspace)
          const bob = yield* member(workspace)
          const { id } = yield* createRecord(ann.client, deal, { title: "Kiosk", amount: "100.00" })
          const v = (yield* readDeal(ann.client, id)).version
          expect((yield* readDeal(bob.client, id)).version).toBe(v)
          const annEdit = { values: { title: "Kiosk rollout" } }
          const bobEdit = { values: { amount: "250.00" } }

          const [annAnswer, bobAnswer] = yield* race(
            workspace,
            id,
            ifMatch(ann.client, ann.cookie, `"${v}"`).patch(dealPath(id), annEdit),
            ifMatch(bob.client, bob.cookie, `"${v}"`).patch(dealPath(id), bobEdit)
          )
          expect([annAnswer.status, bobAnswer.status]).toEqual([200, 412])
          const stale = staleBody(bobAnswer)
          expect(stale.currentVersion).toBe(v + 1)
          expect(stale.entries).toHaveLength(1)
          expect(stale.entries[0]?.changes).toEqual({ title: { from: "Kiosk", to: "Kiosk rollout" } })
          expect(stale.entries[0]?.actor).toEqual(expect.objectContaining({ kind: "user", id: ann.user.id }))
          expect(stale.entries[0]).toEqual((yield* timelineOf(ann.client, deal, id)).entries[0])
          expect((yield* readDeal(ann.client, id)).values).toEqual({ title: "Kiosk rollout", amount: "100.00" })

          // Bob saw what changed and saves again on the version he was told: both edits are kept.
          const again = yield* ifMatch(bob.client, bob.cookie, `"${stale.currentVersion}"`).patch(dealPath(id), bobEdit)
          expect([again.status, again.headers.get("etag")]).toEqual([200, `"${v + 2}"`])
          expect((yield* readDeal(ann.client, id)).values).toEqual({ title: "Kiosk rollout", amount: "250.00" })
          const timeline = yield* timelineOf(ann.client, deal, id)
          expect(timeline.entries.map((entry) => entry.operation)).toEqual(["updated", "updated", "created"])
          expect(timeline.entries[0]?.actor).toEqual(expect.objectContaining({ id: bob.user.id }))
        })
    )

    it.effect(
      "DELETE and PATCH with the same If-Match at once, in either order: the first wins, the second gets 412",
      () =>
        Effect.gen(function* () {
          const workspace = yield* freshWorkspace
          const ann = yield* member(workspace)
          const bob = yield* member(workspace)
          const patch = (id: string, v: number) =>
            ifMatch(bob.client, bob.cookie, `"${v}"`).patch(dealPath(id), { values: { title: "Kiosk 2" } })
          const del = (id: string, v: number) => ifMatch(ann.client, ann.cookie, `"${v}"`).del(dealPath(id))

          const gone = yield* createRecord(ann.client, deal, { title: "Kiosk" })
          const [deleted, refusedPatch] = yield* race(workspace, gone.id, del(gone.id, 1), patch(gone.id, 1))
          expect([deleted.status, refusedPatch.status]).toEqual([204, 412])
          const afterDelete = staleBody(refusedPatch)
          expect(afterDelete.currentVersion).toBeNull()
          expect(afterDelete.entries.map((entry) => [entry.operation, entry.record])).toEqual([
            ["deleted", { title: "Kiosk" }]
          ])
          expect(afterDelete.message).toMatch(/was deleted after version 1/)
          expect((yield* ann.client.get(dealPath(gone.id))).status).toBe(404)

          const kept = yield* createRecord(ann.client, deal, { title: "Kiosk" })
          const [patched, refusedDelete] = yield* race(workspace, kept.id, patch(kept.id, 1), del(kept.id, 1))
          expect([patched.status, refusedDelete.status]).toEqual([200, 412])
          const afterPatch = staleBody(refusedDelete)
          expect(afterPatch.currentVersion).toBe(2)
          expect(afterPatch.entries.map((entry) => [entry.operation, entry.changes])).toEqual([
            ["updated", { title: { from: "Kiosk", to: "Kiosk 2" } }]
          ])
          expect((yield* readDeal(ann.client, kept.id)).values).toEqual({ title: "Kiosk 2" })
        })
    )

    it.effect(
      "an action and a PATCH with the same If-Match at once, in either order: the first wins, the second gets 412",
      () =>
        Effect.gen(function* () {
          const workspace = yield* freshWorkspace
          const ann = yield* member(workspace)
          const bob = yield* member(workspace)
          const close = (id: string) =>
            ifMatch(ann.client, ann.cookie, '"1"').post("/api/actions/crm/deal/close", { id })
          const patch = (id: string) =>
            ifMatch(bob.client, bob.cookie, '"1"').patch(dealPath(id), { values: { amount: "20.00" } })
          const open = { title: "Kiosk", stage: "open", amount: "10.00" }

          const closedFirst = yield* createRecord(ann.client, deal, open)
          const [closed, refusedPatch] = yield* race(
            workspace,
            closedFirst.id,
            close(closedFirst.id),
            patch(closedFirst.id)
          )
          expect([closed.status, closed.headers.get("etag"), refusedPatch.status]).toEqual([200, '"2"', 412])
          expect(staleBody(refusedPatch).entries.map((entry) => [entry.changes, entry.cause])).toEqual([
            [{ stage: { from: "open", to: "won" } }, { kind: "action", action: "crm/deal/close" }]
          ])
          expect((yield* readDeal(ann.client, closedFirst.id)).values).toEqual({ ...open, stage: "won" })

          const patchedFirst = yield* createRecord(ann.client, deal, open)
          const [patched, refusedClose] = yield* race(
            workspace,
            patchedFirst.id,
            patch(patchedFirst.id),
            close(patchedFirst.id)
          )
          expect([patched.status, refusedClose.status]).toEqual([200, 412])
          expect(staleBody(refusedClose).entries.map((entry) => entry.changes)).toEqual([
            { amount: { from: "10.00", to: "20.00" } }
          ])
          expect((yield* readDeal(ann.client, patchedFirst.id)).values).toEqual({ ...open, amount: "20.00" })
        })
    )

    it.effect("lifecycle steps honour If-Match; a draft's versions leave no timeline, so its 412 has no entries", () =>
      Effect.gen(function* () {
        const workspace = yield* freshWorkspace
        const { client, cookie } = yield* member(workspace)
        const { id } = yield* createRecord(client, deal, { title: "Draft" }, true)
        expectStatus(200)(yield* client.patch(dealPath(id), { values: { title: "Draft 2" } }))
        const refused = staleBody(yield* ifMatch(client, cookie, '"1"').post(`${dealPath(id)}/publish`))
        expect([refused.currentVersion, refused.entries, refused.moreEntries]).toEqual([2, [], false])
        const published = yield* ifMatch(client, cookie, '"2"').post(`${dealPath(id)}/publish`)
        expect([published.status, published.headers.get("etag")]).toEqual([200, '"3"'])

        const staleArchive = staleBody(yield* ifMatch(client, cookie, '"2"').post(`${dealPath(id)}/archive`))
        expect(staleArchive.entries.map((entry) => entry.operation)).toEqual(["created"])
        expect((yield* ifMatch(client, cookie, '"3"').post(`${dealPath(id)}/archive`)).status).toBe(200)
        expect((yield* ifMatch(client, cookie, '"3"').post(`${dealPath(id)}/restore`)).status).toBe(412)
        const restored = yield* ifMatch(client, cookie, '"4"').post(`${dealPath(id)}/restore`)
        expect([restored.status, restored.headers.get("etag")]).toEqual([200, '"5"'])
      })
    )

    it.effect("If-Match on a record that never existed is a 404, as without it", () =>
      Effect.gen(function* () {
        const workspace = yield* freshWorkspace
        const { client, cookie } = yield* member(workspace)
        const unknown = "0190f7a0-0000-7000-8000-000000000000"
        for (const value of ['"1"', "*"]) {
          const response = yield* ifMatch(client, cookie, value).patch(dealPath(unknown), { values: { title: "X" } })
          expect(response.status, value).toBe(404)
        }
      })
    )

    it.effect("a malformed If-Match is a 400 on every route that takes it, and changes nothing", () =>
      Effect.gen(function* () {
        const workspace = yield* freshWorkspace
        const { client, cookie } = yield* member(workspace)
        const { id } = yield* createRecord(client, deal, { title: "Kiosk", stage: "open" })
        const before = yield* readDeal(client, id)
        const timelineBefore = yield* timelineOf(client, deal, id)
        for (const value of ['"junk"', 'W/"1"', '"1", "2"', "1.5", "-1", '"1', "01", "99999999999999999999", "**"]) {
          const conditional = ifMatch(client, cookie, value)
          const answers = [
            yield* conditional.patch(dealPath(id), { values: { title: "Changed" } }),
            yield* conditional.del(dealPath(id)),
            yield* conditional.post(`${dealPath(id)}/archive`),
            yield* conditional.post("/api/actions/crm/deal/close", { id })
          ]
          for (const answer of answers) {
            expect(answer.status, value).toBe(400)
            expect(answer.body, value).toEqual(
              expect.objectContaining({
                _tag: "HttpApiDecodeError",
                message: expect.stringContaining("the If-Match header is a record's ETag")
              })
            )
          }
        }
        expect(yield* readDeal(client, id)).toEqual(before)
        expect(yield* timelineOf(client, deal, id)).toEqual(timelineBefore)
      })
    )

    it.effect("a PATCH adding three line items without ids gets three ids back, and the timeline adds them by id", () =>
      Effect.gen(function* () {
        const workspace = yield* freshWorkspace
        const { client } = yield* member(workspace)
        const created = yield* createRecord(client, deal, {
          title: "Kiosk",
          lineItems: [{ id: "screen", product: "Screen", quantity: 1 }, { product: "Kiosk frame" }]
        })
        const createdItems = created.values.lineItems as ReadonlyArray<{ id: string }> // the create answer's entries
        expect(createdItems[0]?.id).toBe("screen")
        expect(createdItems[1]?.id).toMatch(uuidv7)

        const patched = expectStatus(200)(
          yield* client.patch(dealPath(created.id), {
            values: {
              lineItems: [
                ...createdItems,
                { product: "Stand", quantity: 2 },
                { product: "Cable", quantity: 3, price: "4.00" },
                { product: "Mount" }
              ]
            }
          })
        ) as VersionedBody
        const items = patched.values.lineItems as ReadonlyArray<{ id: string; product: string }> // as sent back
        expect(items.map((item) => item.product)).toEqual(["Screen", "Kiosk frame", "Stand", "Cable", "Mount"])
        expect(items.slice(0, 2).map((item) => item.id)).toEqual(createdItems.map((item) => item.id))
        const newIds = items.slice(2).map((item) => item.id)
        for (const newId of newIds) expect(newId).toMatch(uuidv7)
        expect(new Set(newIds).size).toBe(3)
        expect(yield* readDeal(client, created.id)).toEqual(patched)

        const [newest] = (yield* timelineOf(client, deal, created.id)).entries
        expect(newest?.changes).toEqual({
          lineItems: {
            added: [
              { id: newIds[0], values: { product: "Stand", quantity: 2 } },
              { id: newIds[1], values: { product: "Cable", quantity: 3, price: "4.00" } },
              { id: newIds[2], values: { product: "Mount" } }
            ]
          }
        })
      })
    )

    it.effect(
      "a write the timeline cannot tell (a reorder of line items, an empty collection where there was none) changes nothing: same version, no entry",
      () =>
        Effect.gen(function* () {
          const workspace = yield* freshWorkspace
          const { client } = yield* member(workspace)
          const created = yield* createRecord(client, deal, {
            title: "Kiosk",
            lineItems: [
              { id: "screen", product: "Screen" },
              { id: "frame", product: "Frame" }
            ]
          })
          const before = yield* readDeal(client, created.id)
          const timelineBefore = yield* timelineOf(client, deal, created.id)
          const items = created.values.lineItems as ReadonlyArray<unknown> // the create answer's entries
          for (const values of [{ lineItems: [...items].reverse() }, { lineItems: items }]) {
            const answer = expectStatus(200)(yield* client.patch(dealPath(created.id), { values })) as VersionedBody
            expect(answer.version, JSON.stringify(values)).toBe(before.version)
          }
          expect(yield* readDeal(client, created.id)).toEqual(before)
          expect(yield* timelineOf(client, deal, created.id)).toEqual(timelineBefore)

          const bare = yield* createRecord(client, deal, { title: "No items" })
          const bareBefore = yield* readDeal(client, bare.id)
          const bareTimeline = yield* timelineOf(client, deal, bare.id)
          const answer = expectStatus(200)(
            yield* client.patch(dealPath(bare.id), { values: { lineItems: [] } })
          ) as VersionedBody
          expect(answer.version).toBe(bareBefore.version)
          expect(yield* readDeal(client, bare.id)).toEqual(bareBefore)
          expect(yield* timelineOf(client, deal, bare.id)).toEqual(bareTimeline)
        })
    )

    it.effect(
      "a replay under an Idempotency-Key sends the first answer's ETag again, even once its If-Match is stale",
      () =>
        Effect.gen(function* () {
          const workspace = yield* freshWorkspace
          const { client, cookie } = yield* member(workspace)
          const keyedCreate = clientFor(client.base, cookie, { "idempotency-key": "create-1" })
          const created = yield* keyedCreate.post(`/api/records/${deal}`, { values: { title: "Kiosk" } })
          const createdAgain = yield* keyedCreate.post(`/api/records/${deal}`, { values: { title: "Kiosk" } })
          expect(createdAgain.headers.get("idempotency-replayed")).toBe("true")
          expect([created.headers.get("etag"), createdAgain.headers.get("etag")]).toEqual(['"1"', '"1"'])
          const { id } = created.body as VersionedBody

          const keyedPatch = clientFor(client.base, cookie, { "idempotency-key": "patch-1", "if-match": '"1"' })
          const first = yield* keyedPatch.patch(dealPath(id), { values: { title: "Kiosk 2" } })
          const retry = yield* keyedPatch.patch(dealPath(id), { values: { title: "Kiosk 2" } })
          expect([first.status, retry.status]).toEqual([200, 200])
          expect(retry.headers.get("idempotency-replayed")).toBe("true")
          expect([first.headers.get("etag"), retry.headers.get("etag")]).toEqual(['"2"', '"2"'])
          expect(retry.body).toEqual(first.body)
          expect((yield* readDeal(client, id)).version).toBe(2)
        })
    )

    it.effect("the entries since a version: the newest ones, oldest first, bounded, with a flag when more", () =>
      Effect.gen(function* () {
        const workspace = yield* freshWorkspace
        const { client } = yield* member(workspace)
        const { id } = yield* createRecord(client, deal, { title: "v1" })
        for (const n of [2, 3, 4, 5, 6]) {
          expectStatus(200)(yield* client.patch(dealPath(id), { values: { title: `v${n}` } }))
        }
        const timeline = yield* Timeline
        const titles = (entries: ReadonlyArray<{ readonly changes?: unknown }>) =>
          entries.map((entry) => (entry.changes as { title: { to: string } }).title.to) // every entry here is a title update
        const bounded = yield* timeline.since(workspace, deal, id, 1, 3)
        expect([titles(bounded.entries), bounded.moreEntries]).toEqual([["v4", "v5", "v6"], true])
        const exact = yield* timeline.since(workspace, deal, id, 3, 3)
        expect([titles(exact.entries), exact.moreEntries]).toEqual([["v4", "v5", "v6"], false])
        const current = yield* timeline.since(workspace, deal, id, 6, 3)
        expect([current.entries, current.moreEntries]).toEqual([[], false])

        // Rows from before versions existed carry none: they are older than any version a caller can name.
        const sql = yield* SqlClient.SqlClient
        const { id: old } = yield* createRecord(client, deal, { title: "old" })
        yield* sql`UPDATE ${sql(workspace.table("records"))} SET version = 1 WHERE id = ${old}`
        yield* sql`ALTER TABLE ${sql(workspace.table("audit_entries"))} DISABLE TRIGGER USER`
        yield* sql`UPDATE ${sql(workspace.table("audit_entries"))} SET record_version = NULL WHERE business_object_id = ${old}`
        yield* sql`ALTER TABLE ${sql(workspace.table("audit_entries"))} ENABLE TRIGGER USER`
        expectStatus(200)(yield* client.patch(dealPath(old), { values: { title: "new" } }))
        const sinceLegacy = yield* timeline.since(workspace, deal, old, 0, 3)
        expect([titles(sinceLegacy.entries), sinceLegacy.moreEntries]).toEqual([["new"], false])
      })
    )
  }
)
