import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { Arbitrary, Effect } from "effect"
import { RevertRecord } from "../../src/api/RecordHistory"
import type { Workspace } from "../../src/api/Workspace"
import { Roles } from "../../src/auth/Roles"
import { clientFor, createRecord, recordsOf, signedInMember, timelineOf } from "../support/api"
import type { Client } from "../support/api"
import { refusal } from "../support/apiCaller"
import { baseUrl, freshWorkspace, TestApp } from "../support/TestApp"
import { constantFrom, integer, option, someKeys, uniqueArray } from "../support/arbitraries"

/**
 * A record as it was and reverts (docs/history.md), over real HTTP and
 * PostgreSQL: `?asOf=` by entry and by instant, archived and deleted records,
 * the 400 / 403 / 404 refusals; revert by restore and by undo, the 409 naming
 * the fields changed again, `force`, `If-Match`, `Idempotency-Key`, and the
 * cause naming the reverted entry on the timeline.
 */

const deal = "crm/deal"

const member = (workspace: Workspace, role = "admin") =>
  Effect.flatMap(baseUrl, (base) => signedInMember(base, workspace, role))

/** The deal's timeline entries, oldest first. */
const entriesOf = (client: Client, id: string) =>
  Effect.map(timelineOf(client, deal, id, { limit: 200 }), (page) => [...page.entries].reverse())

const valuesNow = (client: Client, id: string) =>
  Effect.map(recordsOf(client, deal).get(id), (answer) => answer.body.values).pipe(Effect.orDie)

/** A deal written three times: created, amount changed, title changed; with its values after each write. */
const threeVersions = (client: Client) =>
  Effect.gen(function* () {
    const records = recordsOf(client, deal)
    const created = yield* createRecord(client, deal, { title: "Kiosk", amount: "100.00" })
    const after = [created.values]
    yield* records.update(created.id, { amount: "250.00" }).pipe(Effect.orDie)
    after.push(yield* valuesNow(client, created.id))
    yield* records.update(created.id, { title: "Kiosk rollout" }).pipe(Effect.orDie)
    after.push(yield* valuesNow(client, created.id))
    return { id: created.id, after, entries: yield* entriesOf(client, created.id) }
  })

const absentOr = <A>(arbitrary: Arbitrary.Arbitrary<A>) => option(arbitrary, { nil: null, freq: 3 })

/** A PATCH of a deal: some of its fields, each maybe cleared (never the required title). */
const dealPatch = someKeys(
  Arbitrary.all({
    title: constantFrom("Kiosk", "Kiosk rollout"),
    stage: absentOr(constantFrom("open", "won")),
    amount: absentOr(constantFrom("100.00", "250.00")),
    address: absentOr(someKeys(Arbitrary.all({ city: constantFrom("Lyon", "Paris") }), ["city"])),
    lineItems: absentOr(
      uniqueArray(Arbitrary.all({ id: constantFrom("l1", "l2", "l3"), quantity: integer(1, 3) }), (entry) => entry.id, {
        maxLength: 3
      })
    )
  }),
  ["title", "stage", "amount", "address", "lineItems"]
)

/** Values compared as the timeline keeps them: collection entries by id, an empty collection as none. */
const canonical = (values: Readonly<Record<string, unknown>>) =>
  Object.fromEntries(
    Object.entries(values).flatMap(([name, value]) =>
      Array.isArray(value)
        ? value.length === 0
          ? []
          : [[name, [...value].sort((a, b) => String(a.id).localeCompare(String(b.id)))]]
        : [[name, value]]
    )
  )

layer(TestApp, { excludeTestServices: true })("a record as it was, and reverts", (it) => {
  it.effect(
    "property: for random updates, the deal as of every entry is the deal read right after that write",
    () =>
      Effect.gen(function* () {
        const { client } = yield* member(yield* freshWorkspace)
        const records = recordsOf(client, deal)
        const result = yield* Arbitrary.checkEffect(
          Arbitrary.array(dealPatch, { minLength: 1, maxLength: 6 }),
          (patches) =>
            Effect.gen(function* () {
              const created = yield* createRecord(client, deal, { title: "Kiosk" })
              const read = [created.values]
              const newest = Effect.map(
                timelineOf(client, deal, created.id, { limit: 1 }),
                (page) => page.entries[0]?.id
              )
              for (const patch of patches) {
                const before = yield* newest
                yield* records.update(created.id, patch)
                // A write the diff sees no change in wrote no entry (an empty collection where there was none still
                // moves the version: the entry count, not the version, tells).
                if ((yield* newest) !== before) read.push((yield* records.get(created.id)).body.values)
              }
              const entries = yield* entriesOf(client, created.id)
              expect(entries.length).toBe(read.length)
              for (const [i, entry] of entries.entries()) {
                const asOf = (yield* records.asOf(created.id, entry.id)).body
                expect(canonical(asOf.values)).toEqual(canonical(read[i] ?? {}))
              }
              return true
            }).pipe(Effect.orDie),
          { runs: 8 }
        )
        expect(Arbitrary.formatCheckFailure(result)).toBeUndefined()
      }),
    60_000
  )

  it.effect("asOf an entry or an instant answers the values just after it, with the entry it stands on", () =>
    Effect.gen(function* () {
      const { client, user } = yield* member(yield* freshWorkspace)
      const { id, after, entries } = yield* threeVersions(client)
      expect(entries.map((entry) => entry.operation)).toEqual(["created", "updated", "updated"])
      const records = recordsOf(client, deal)
      for (const [i, entry] of entries.entries()) {
        const byEntry = yield* records.asOf(id, entry.id).pipe(Effect.orDie)
        expect(byEntry.body.values).toEqual(after[i])
        expect(byEntry.json).toEqual({
          id,
          businessObject: deal,
          state: "operational",
          version: i + 1,
          values: after[i],
          entry: {
            id: entry.id,
            at: entry.at,
            actor: { kind: "user", id: user.id, name: user.name, email: user.email }
          },
          title: after[i]?.title,
          titles: {}
        })
        // Not a version to write on: no ETag.
        expect(byEntry.headers.get("etag")).toBeNull()
        // Its own instant stands on it (each write was a unit of its own, begun later than the one before).
        const byInstant = yield* records.asOf(id, entry.at).pipe(Effect.orDie)
        expect(byInstant.body.entry.id).toBe(entry.id)
      }
      // Any zone, and a point after every entry: the record now.
      const last = entries[2]?.at ?? ""
      const later = new Date(Date.parse(last) + 60_000).toISOString().replace("Z", "+00:00")
      expect((yield* records.asOf(id, later).pipe(Effect.orDie)).body.values).toEqual(after[2])
      // Upper-case entry ids name the same entry.
      const upper = (entries[1]?.id ?? "").toUpperCase()
      expect((yield* records.asOf(id, upper).pipe(Effect.orDie)).body.entry.id).toBe(entries[1]?.id)
    })
  )

  it.effect("archived and deleted records are read as they were; before creation and after deletion are 404", () =>
    Effect.gen(function* () {
      const { client } = yield* member(yield* freshWorkspace)
      const records = recordsOf(client, deal)
      const { id, after } = yield* threeVersions(client)
      yield* records.archive(id).pipe(Effect.orDie)
      const archivedEntries = yield* entriesOf(client, id)
      const archived = yield* records.asOf(id, archivedEntries[3]?.id ?? "").pipe(Effect.orDie)
      expect([archived.body.state, archived.body.values]).toEqual(["archived", after[2]])
      const beforeArchive = yield* records.asOf(id, archivedEntries[2]?.id ?? "").pipe(Effect.orDie)
      expect(beforeArchive.body.state).toBe("operational")

      yield* records.remove(id).pipe(Effect.orDie)
      expect((yield* refusal(records.get(id))).status).toBe(404)
      const entries = yield* entriesOf(client, id)
      expect(entries.map((entry) => entry.operation)).toEqual(["created", "updated", "updated", "archived", "deleted"])
      const asCreated = yield* records.asOf(id, entries[0]?.id ?? "").pipe(Effect.orDie)
      expect(asCreated.body.values).toEqual(after[0])
      const asUpdated = yield* records.asOf(id, entries[1]?.id ?? "").pipe(Effect.orDie)
      expect(asUpdated.body.values).toEqual(after[1])

      const deleted = yield* refusal(records.asOf(id, entries[4]?.id ?? ""))
      expect([deleted.status, deleted.body]).toEqual([
        404,
        expect.objectContaining({ _tag: "NotFound", message: expect.stringMatching(/was deleted at .*point before/) })
      ])
      const now = yield* refusal(records.asOf(id, new Date().toISOString()))
      expect(now.status).toBe(404)
      const before = yield* refusal(records.asOf(id, "2001-01-01T00:00:00Z"))
      expect([before.status, before.body]).toEqual([
        404,
        expect.objectContaining({ message: expect.stringMatching(/did not exist yet at 2001-01-01T00:00:00Z/) })
      ])
    })
  )

  it.effect("malformed asOf is 400; unknown records and other records' entries 404; readers need read", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const { client } = yield* member(workspace)
      const { id } = yield* threeVersions(client)
      const other = yield* threeVersions(client)
      for (const asOf of [
        "yesterday",
        "2026-02-30T00:00:00Z",
        "2026-11-23T20:10:15",
        "2026-11-23T24:00:00Z",
        "1",
        "2026-11-23T20:10:15+20:00"
      ]) {
        const response = yield* client.get(`/api/records/${deal}/${id}?asOf=${encodeURIComponent(asOf)}`)
        expect([asOf, response.status, response.body]).toEqual([
          asOf,
          400,
          expect.objectContaining({ _tag: "HttpApiDecodeError", message: expect.stringContaining("asOf is") })
        ])
      }
      const records = recordsOf(client, deal)
      const foreign = yield* refusal(records.asOf(id, other.entries[0]?.id ?? ""))
      expect([foreign.status, foreign.body]).toEqual([
        404,
        expect.objectContaining({ message: expect.stringMatching(/^no entry .* on the timeline of/) })
      ])
      expect((yield* refusal(records.asOf(crypto.randomUUID(), "2030-01-01T00:00:00Z"))).body).toEqual(
        expect.objectContaining({ _tag: "NotFound", message: expect.stringMatching(/^no crm\/deal record/) })
      )
      const draft = yield* createRecord(client, deal, { title: "Draft" }, true)
      expect((yield* refusal(records.asOf(draft.id, "2030-01-01T00:00:00Z"))).body).toEqual(
        expect.objectContaining({ message: expect.stringMatching(/is a draft: it has no history/) })
      )

      yield* (yield* Roles).grant(workspace, "company-reader", "crm/company", "read")
      const outsider = yield* member(workspace, "company-reader")
      const denied = yield* refusal(recordsOf(outsider.client, deal).asOf(id, "2030-01-01T00:00:00Z"))
      expect(denied.status).toBe(403)
      expect((yield* refusal(recordsOf(outsider.client, deal).get(id))).status).toBe(403)
      const anonymous = yield* refusal(recordsOf(clientFor(client.base, ""), deal).asOf(id, "2030-01-01T00:00:00Z"))
      expect(anonymous.status).toBe(401)
    })
  )

  it.effect("restore: one update back to the values as of an entry, its cause naming the entry", () =>
    Effect.gen(function* () {
      const { client, user } = yield* member(yield* freshWorkspace)
      const records = recordsOf(client, deal)
      const { id, after, entries } = yield* threeVersions(client)
      const created = entries[0]?.id ?? ""
      const restored = yield* records
        .revert(id, new RevertRecord({ entry: created, mode: "restore", force: false }))
        .pipe(Effect.orDie)
      expect([restored.body.values, restored.body.version, restored.headers.get("etag")]).toEqual([after[0], 4, '"4"'])
      const [newest] = (yield* timelineOf(client, deal, id)).entries
      expect(newest).toEqual(
        expect.objectContaining({
          operation: "updated",
          actor: expect.objectContaining({ kind: "user", id: user.id }),
          cause: { kind: "action", action: "crm/deal/revert", revert: { entry: created, mode: "restore" } },
          changes: { title: { from: "Kiosk rollout", to: "Kiosk" }, amount: { from: "250.00", to: "100.00" } }
        })
      )
      // Rebuilt as of the revert's own entry: the state restored.
      expect((yield* records.asOf(id, newest?.id ?? "").pipe(Effect.orDie)).body.values).toEqual(after[0])
      // Restoring what the record already holds changes nothing and writes nothing.
      const again = yield* records
        .revert(id, new RevertRecord({ entry: created, mode: "restore", force: false }))
        .pipe(Effect.orDie)
      expect(again.body.version).toBe(4)
      expect((yield* entriesOf(client, id)).length).toBe(4)
    })
  )

  it.effect("undo takes back one entry's fields; a field changed again since is a 409 naming it, unless forced", () =>
    Effect.gen(function* () {
      const { client } = yield* member(yield* freshWorkspace)
      const records = recordsOf(client, deal)
      const { id, entries } = yield* threeVersions(client)
      const amountChange = entries[1]?.id ?? ""
      // The amount was not changed since: undoing it puts back 100.00 and keeps the later title.
      const undone = yield* records
        .revert(id, new RevertRecord({ entry: amountChange, mode: "undo", force: false }))
        .pipe(Effect.orDie)
      expect(undone.body.values).toEqual({ title: "Kiosk rollout", amount: "100.00" })
      const [newest] = (yield* timelineOf(client, deal, id)).entries
      expect(newest?.cause).toEqual({
        kind: "action",
        action: "crm/deal/revert",
        revert: { entry: amountChange, mode: "undo" }
      })
      expect(newest?.changes).toEqual({ amount: { from: "250.00", to: "100.00" } })

      // Now the undo of that amount change again: the amount was changed since (by the undo itself).
      const refused = yield* refusal(
        records.revert(id, new RevertRecord({ entry: amountChange, mode: "undo", force: false }))
      )
      expect([refused.status, refused.body]).toEqual([
        409,
        {
          _tag: "ChangedSince",
          message: `cannot undo entry ${amountChange}: amount changed again since; send force: true to overwrite it`,
          fields: ["amount"],
          requestId: expect.any(String)
        }
      ])
      expect((yield* records.get(id).pipe(Effect.orDie)).body.version).toBe(4)
      const forced = yield* records
        .revert(id, new RevertRecord({ entry: amountChange, mode: "undo", force: true }))
        .pipe(Effect.orDie)
      expect([forced.body.values, forced.body.version]).toEqual([{ title: "Kiosk rollout", amount: "100.00" }, 4])

      // Undo of the title change (the newest update): no conflict.
      const titled = yield* records
        .revert(id, new RevertRecord({ entry: entries[2]?.id ?? "", mode: "undo", force: false }))
        .pipe(Effect.orDie)
      expect(titled.body.values).toEqual({ title: "Kiosk", amount: "100.00" })
    })
  )

  it.effect(
    "a forced undo overwrites the later change; entries that are not updates, or not this record's, are 422",
    () =>
      Effect.gen(function* () {
        const { client } = yield* member(yield* freshWorkspace)
        const records = recordsOf(client, deal)
        const { id, entries } = yield* threeVersions(client)
        yield* records.update(id, { amount: "900.00" }).pipe(Effect.orDie)
        const amountChange = entries[1]?.id ?? ""
        const refused = yield* refusal(
          records.revert(id, new RevertRecord({ entry: amountChange, mode: "undo", force: false }))
        )
        expect([refused.status, (refused.body as { fields: unknown }).fields]).toEqual([409, ["amount"]])
        const forced = yield* records
          .revert(id, new RevertRecord({ entry: amountChange, mode: "undo", force: true }))
          .pipe(Effect.orDie)
        expect(forced.body.values).toEqual({ title: "Kiosk rollout", amount: "100.00" })

        const created = yield* refusal(
          records.revert(id, new RevertRecord({ entry: entries[0]?.id ?? "", mode: "undo", force: false }))
        )
        expect([created.status, created.body]).toEqual([
          422,
          expect.objectContaining({ message: expect.stringMatching(/is a created entry: only an update's changes/) })
        ])
        const other = yield* threeVersions(client)
        const foreign = yield* refusal(
          records.revert(id, new RevertRecord({ entry: other.entries[1]?.id ?? "", mode: "restore", force: false }))
        )
        expect([foreign.status, foreign.body]).toEqual([
          422,
          expect.objectContaining({ message: expect.stringMatching(/^no entry .* on the timeline of/) })
        ])
        const malformed = yield* client.post(`/api/records/${deal}/${id}/revert`, {
          entry: "nope",
          mode: "undo",
          force: false
        })
        expect(malformed.status).toBe(400)
        const badMode = yield* client.post(`/api/records/${deal}/${id}/revert`, { entry: entries[0]?.id, mode: "redo" })
        expect(badMode.status).toBe(400)
      })
  )

  it.effect("revert obeys If-Match (412), Idempotency-Key (one row), the update grant, and the record's state", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const { client } = yield* member(workspace)
      const records = recordsOf(client, deal)
      const { id, entries } = yield* threeVersions(client)
      const body = new RevertRecord({ entry: entries[0]?.id ?? "", mode: "restore", force: false })

      const stale = yield* refusal(records.revert(id, body, { ifMatch: '"2"' }))
      expect([stale.status, stale.body]).toEqual([
        412,
        expect.objectContaining({ _tag: "PreconditionFailed", currentVersion: 3 })
      ])
      expect((yield* entriesOf(client, id)).length).toBe(3)

      const key = crypto.randomUUID()
      const first = yield* records.revert(id, body, { ifMatch: '"3"', idempotencyKey: key }).pipe(Effect.orDie)
      const replay = yield* records.revert(id, body, { ifMatch: '"3"', idempotencyKey: key }).pipe(Effect.orDie)
      expect(first.body.version).toBe(4)
      expect([replay.headers.get("idempotency-replayed"), replay.headers.get("etag"), replay.json]).toEqual([
        "true",
        '"4"',
        first.json
      ])
      expect((yield* entriesOf(client, id)).length).toBe(4)
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(workspace.table("audit_entries"))}
        WHERE business_object_id = ${id} AND cause->'revert'->>'entry' = ${entries[0]?.id ?? ""}`.pipe(Effect.orDie)
      expect(rows[0]?.n).toBe(1)

      yield* (yield* Roles).grant(workspace, "deal-reader", "crm/deal", "read")
      const reader = yield* member(workspace, "deal-reader")
      expect(
        (yield* recordsOf(reader.client, deal)
          .asOf(id, entries[0]?.id ?? "")
          .pipe(Effect.orDie)).status
      ).toBe(200)
      const denied = yield* refusal(recordsOf(reader.client, deal).revert(id, body))
      expect(denied.status).toBe(403)

      yield* records.archive(id).pipe(Effect.orDie)
      const archived = yield* refusal(records.revert(id, body))
      expect([archived.status, archived.body]).toEqual([
        409,
        expect.objectContaining({ message: "cannot update an archived crm/deal record" })
      ])
      yield* records.remove(id).pipe(Effect.orDie)
      const deleted = yield* refusal(records.revert(id, body))
      expect([deleted.status, deleted.body]).toEqual([
        409,
        expect.objectContaining({
          _tag: "Conflict",
          message: expect.stringMatching(/was deleted: a deleted record cannot be reverted/)
        })
      ])
      expect((yield* refusal(records.revert(crypto.randomUUID(), body))).status).toBe(404)
    })
  )
})
