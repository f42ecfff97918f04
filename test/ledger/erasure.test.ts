import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Exit, Queue } from "effect"
import { isErased } from "../../src/api/Erased"
import { versionTag } from "../../src/api/EntityTag"
import { EraseRecord } from "../../src/api/Erasure"
import { isJsonObject } from "../../src/api/Json"
import { RevertRecord } from "../../src/api/RecordHistory"
import type { Workspace } from "../../src/api/Workspace"
import { Roles } from "../../src/auth/Roles"
import { BroadcastBus } from "../../src/broadcast/BroadcastBus"
import type { DigestClaim } from "../../src/chain/verifyChain"
import { readHead } from "../../src/ledger/LedgerRows"
import { verificationPassed, verifyLedger } from "../../src/ledger/Verification"
import { queueTable } from "../../src/tenancy/migrations/durableQueue"
import type { Client } from "../support/api"
import { createRecord, recordsOf, signedInMember, timelineOf } from "../support/api"
import { recordPath, refusal } from "../support/apiCaller"
import { runCli } from "../support/cli"
import { subscribeQueue } from "../support/hintQueue"
import { baseUrl, freshWorkspace, TestApp, uniqueSuffix } from "../support/TestApp"

/**
 * Erasure (docs/ledger.md, "Erasure") over real HTTP and PostgreSQL: the
 * values named are gone from every row of the workspace's schema (and from
 * its runs in the durable queue), the ledger still verifies, also against a
 * digest of its head taken before; the timeline says who erased what and
 * when, the record as it was shows "erased", reverts across an erased value
 * work; nested paths, collection members, deleted records, erasing twice,
 * the refusals and the command line.
 */

const company = "crm/company"
const deal = "crm/deal"

const admin = (workspace: Workspace) => Effect.flatMap(baseUrl, (base) => signedInMember(base, workspace))

const erase = (
  client: Client,
  businessObject: string,
  id: string,
  fields: ReadonlyArray<string>,
  headers: { readonly "idempotency-key"?: string; readonly "if-match"?: string } = {}
) =>
  client.call((api) =>
    api.records.erase({ params: recordPath(businessObject, id), payload: new EraseRecord({ fields }), headers })
  )

/** The chain's head now, as a digest taken of it would pin it. */
const digestOfHead = (workspace: Workspace) =>
  Effect.map(
    readHead(workspace),
    (head): DigestClaim => ({
      position: BigInt(head.position),
      hash: Buffer.from(head.hash, "hex"),
      label: "the digest taken before the erasure"
    })
  )

const expectVerifies = (workspace: Workspace, digests: ReadonlyArray<DigestClaim> = []) =>
  Effect.gen(function* () {
    const report = yield* verifyLedger(workspace, digests)
    expect(report.chainFault).toBeNull()
    expect(report.recordFaults).toEqual([])
    expect(verificationPassed(report)).toBe(true)
  })

/**
 * Where `needle` is still found: every text, json and jsonb column of every
 * table of the workspace's schema, and the workspace's elements of the
 * durable queue (a table shared by the workspaces).
 */
const liveRowsHolding = (workspace: Workspace, needle: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const columns = yield* sql<{ readonly tableName: string; readonly columnName: string }>`
      SELECT table_name, column_name FROM information_schema.columns
      WHERE table_schema = ${workspace.schema} AND data_type IN ('text', 'json', 'jsonb', 'character varying')`
    expect(columns.length).toBeGreaterThan(10)
    const found: Array<string> = []
    for (const { columnName, tableName } of columns) {
      const [row] = yield* sql<{ readonly n: number }>`SELECT count(*)::int AS n
        FROM ${sql(`${workspace.schema}.${tableName}`)} WHERE strpos(${sql(columnName)}::text, ${needle}) > 0`
      if ((row?.n ?? 0) > 0) found.push(`${tableName}.${columnName}`)
    }
    const [queued] = yield* sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM ${sql(queueTable)}
      WHERE strpos(element, ${workspace.id}) > 0 AND strpos(element, ${needle}) > 0`
    if ((queued?.n ?? 0) > 0) found.push(queueTable)
    return found
  })

/** The record's timeline, oldest first. */
const entriesOf = (client: Client, businessObject: string, id: string) =>
  Effect.map(timelineOf(client, businessObject, id, { limit: 200 }), (page) => [...page.entries].reverse())

layer(TestApp, { excludeTestServices: true })("erasure", (it) => {
  it.effect(
    "a company's website erased: gone from every live row, the ledger verifies (against a digest of before too), " +
      "the timeline says who erased it, the past shows it erased, a revert across it writes no marker",
    () =>
      Effect.gen(function* () {
        const workspace = yield* freshWorkspace
        const { client } = yield* admin(workspace)
        const records = recordsOf(client, company)
        const createKey = `create-${uniqueSuffix()}`
        const secret = `https://secret-${uniqueSuffix()}.example`
        const second = `https://second-${uniqueSuffix()}.example`
        const created = (yield* records
          .create({ name: "Erasure Co", website: secret }, { idempotencyKey: createKey })
          .pipe(Effect.orDie)).body
        yield* records.update(created.id, { website: second }, { idempotencyKey: `update-${uniqueSuffix()}` })
        yield* records.update(created.id, { name: "Erasure Company" })
        const before = yield* entriesOf(client, company, created.id)
        const digest = yield* digestOfHead(workspace)
        expect([...(yield* liveRowsHolding(workspace, secret))].sort()).toEqual([
          "audit_entries.changes",
          "audit_entries.record",
          "idempotency_keys.response"
        ])

        const answer = (yield* erase(client, company, created.id, ["website"]).pipe(Effect.orDie)).body
        expect(answer).toMatchObject({ businessObject: company, id: created.id, fields: ["website"], version: 4 })
        // created, the website's update, the erasure's own update (its diff held the value).
        expect({ rows: answer.rows, values: answer.values }).toEqual({ rows: 3, values: 4 })

        yield* expectVerifies(workspace, [digest])
        expect(yield* liveRowsHolding(workspace, secret)).toEqual([])
        expect(yield* liveRowsHolding(workspace, second)).toEqual([])
        expect((yield* records.get(created.id).pipe(Effect.orDie)).body.values).toEqual({ name: "Erasure Company" })
        // The create's retry with its key is neither run again nor answered with the value: refused.
        const retry = yield* refusal(
          records.create({ name: "Erasure Co", website: secret }, { idempotencyKey: createKey })
        )
        expect(retry.status).toBe(422)
        expect(JSON.stringify(retry.body)).not.toContain("secret-")

        // The timeline: the erasure's update, then the `erased` row, both naming the field, never a value.
        const after = yield* entriesOf(client, company, created.id)
        const [clearing, erased] = after.slice(before.length)
        const cause = { kind: "action", action: `${company}/erase`, erase: { fields: ["website"] } }
        expect(clearing).toMatchObject({ operation: "updated", cause })
        expect(clearing?.changes?.website).toEqual({ from: expect.anything(), to: null })
        expect(isErased(Reflect.get(clearing?.changes?.website ?? {}, "from"))).toBe(true)
        expect(erased).toMatchObject({ operation: "erased", cause, id: answer.entry })
        expect(erased?.record).toBeUndefined()
        expect(erased?.changes).toBeUndefined()
        expect(erased?.actor).toMatchObject({ kind: "user" })
        expect(JSON.stringify(after)).not.toContain("secret-")

        // The record as it was: the value reads as erased.
        const [first] = before
        const asOf = (yield* records.asOf(created.id, first?.id ?? "").pipe(Effect.orDie)).body
        expect(asOf.values.name).toBe("Erasure Co")
        expect(isErased(asOf.values.website)).toBe(true)

        // Restoring the state as of the first entry: its erased website is restored as no value.
        const restored = (yield* records
          .revert(created.id, new RevertRecord({ entry: first?.id ?? "", mode: "restore", force: false }))
          .pipe(Effect.orDie)).body
        expect(restored.values).toEqual({ name: "Erasure Co" })
        // Undoing the website's update: its value before (the first, erased) comes back as none.
        const websiteUpdate = before[1]
        const undo = yield* refusal(
          records.revert(created.id, new RevertRecord({ entry: websiteUpdate?.id ?? "", mode: "undo", force: false }))
        )
        expect(undo.status).toBe(409)
        const undone = (yield* records
          .revert(created.id, new RevertRecord({ entry: websiteUpdate?.id ?? "", mode: "undo", force: true }))
          .pipe(Effect.orDie)).body
        expect(undone.values).toEqual({ name: "Erasure Co" })
        yield* expectVerifies(workspace, [digest])
      })
  )

  it.effect(
    "a struct's member and a collection's member of a deal, erased one after the other (rows erased twice), " +
      "its queued workflow run scrubbed; an archived deal holding the value is refused",
    () =>
      Effect.gen(function* () {
        const workspace = yield* freshWorkspace
        const { client } = yield* admin(workspace)
        const records = recordsOf(client, deal)
        const street = `Secret street ${uniqueSuffix()}`
        const product = `Secret product ${uniqueSuffix()}`
        const other = `Other product ${uniqueSuffix()}`
        const created = yield* createRecord(client, deal, {
          title: "Kiosk",
          address: { street, city: "Oslo" },
          lineItems: [
            { id: "l1", product, quantity: 1 },
            { id: "l2", product: other, quantity: 2 }
          ]
        })
        yield* records.update(created.id, {
          lineItems: [
            { id: "l1", product, quantity: 3 },
            { id: "l2", product: `${product} too`, quantity: 2 },
            { id: "l3", product, quantity: 1 }
          ]
        })
        // Archiving queues the note-archived-deal workflow run: its event holds the deal's values.
        yield* records.archive(created.id)
        const sql = yield* SqlClient.SqlClient
        const [queued] = yield* sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM ${sql(queueTable)}
          WHERE strpos(element, ${created.id}) > 0 AND strpos(element, ${street}) > 0`
        expect(queued?.n).toBe(1)
        const digest = yield* digestOfHead(workspace)

        const archived = yield* refusal(erase(client, deal, created.id, ["address.street"]))
        expect(archived.status).toBe(409)
        expect(JSON.stringify(archived.body)).toContain("restore it first")
        yield* records.restore(created.id)

        const first = (yield* erase(client, deal, created.id, ["address.street"]).pipe(Effect.orDie)).body
        // created, and the erasure's update (its diff held the struct whole).
        expect(first.rows).toBe(2)
        expect(yield* liveRowsHolding(workspace, street)).toEqual([])
        yield* expectVerifies(workspace, [digest])

        const second = (yield* erase(client, deal, created.id, ["lineItems.product"]).pipe(Effect.orDie)).body
        // created (erased a second time), the collection's update, and this erasure's update.
        expect(second.rows).toBe(3)
        expect(yield* liveRowsHolding(workspace, product)).toEqual([])
        expect(yield* liveRowsHolding(workspace, other)).toEqual([])
        yield* expectVerifies(workspace, [digest])

        const now = (yield* records.get(created.id).pipe(Effect.orDie)).body.values
        expect(now.address).toEqual({ city: "Oslo" })
        expect(now.lineItems).toEqual([
          { id: "l1", quantity: 3 },
          { id: "l2", quantity: 2 },
          { id: "l3", quantity: 1 }
        ])
        const [createdEntry] = yield* entriesOf(client, deal, created.id)
        const asOf = (yield* records.asOf(created.id, createdEntry?.id ?? "").pipe(Effect.orDie)).body.values
        const address = asOf.address
        expect(isJsonObject(address) && isErased(address.street)).toBe(true)
        expect(address).toMatchObject({ city: "Oslo" })

        // Erasing what is already erased changes no row, and still verifies.
        const again = (yield* erase(client, deal, created.id, ["address.street"]).pipe(Effect.orDie)).body
        expect(again.rows).toBe(0)
        yield* expectVerifies(workspace, [digest])
      })
  )

  it.effect("a deleted record's history erased; a live record erased whole is deleted with every value erased", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const { client } = yield* admin(workspace)
      const records = recordsOf(client, company)
      const hints = yield* subscribeQueue(yield* BroadcastBus, workspace.id)
      const secret = `https://gone-${uniqueSuffix()}.example`
      const gone = yield* createRecord(client, company, { name: "Gone Co", website: secret })
      yield* records.remove(gone.id)
      const digest = yield* digestOfHead(workspace)
      const key = { "idempotency-key": `erase-${uniqueSuffix()}` }
      const answer = (yield* erase(client, company, gone.id, ["website"], key).pipe(Effect.orDie)).body
      expect(answer).toMatchObject({ rows: 2, values: 2, version: null })
      // Its retry with the key is answered again, and erases nothing more.
      const retried = yield* erase(client, company, gone.id, ["website"], key).pipe(Effect.orDie)
      expect(retried.headers.get("idempotency-replayed")).toBe("true")
      expect(retried.body).toEqual(answer)
      // One `changed` hint per unit: the creation's, the deletion's and the erasure's (which wrote no update).
      for (let i = 0; i < 3; i++) {
        const hint = yield* Queue.take(hints).pipe(Effect.timeout("5 seconds"))
        expect(hint).toMatchObject({ type: "changed", data: { businessObject: company, businessObjectId: gone.id } })
      }
      expect(yield* liveRowsHolding(workspace, secret)).toEqual([])
      yield* expectVerifies(workspace, [digest])
      const entries = yield* entriesOf(client, company, gone.id)
      expect(entries.map((entry) => entry.operation)).toEqual(["created", "deleted", "erased"])

      const whole = `Whole ${uniqueSuffix()}`
      const live = yield* createRecord(client, company, { name: whole, website: "https://whole.example" })
      const erased = (yield* erase(client, company, live.id, []).pipe(Effect.orDie)).body
      expect(erased).toMatchObject({ fields: [], version: null })
      expect(yield* liveRowsHolding(workspace, whole)).toEqual([])
      expect(yield* liveRowsHolding(workspace, "https://whole.example")).toEqual([])
      expect((yield* refusal(records.get(live.id))).status).toBe(404)
      yield* expectVerifies(workspace, [digest])
      const timeline = yield* entriesOf(client, company, live.id)
      expect(timeline.map((entry) => entry.operation)).toEqual(["created", "deleted", "erased"])
      expect(timeline[2]?.cause).toEqual({ kind: "action", action: `${company}/erase`, erase: { fields: [] } })
    })
  )

  it.effect(
    "refusals: not an admin 403, no such record 404, a bad path 400, If-Match 412, a required field 422, a draft 409",
    () =>
      Effect.gen(function* () {
        const workspace = yield* freshWorkspace
        const { client } = yield* admin(workspace)
        yield* (yield* Roles).grant(workspace, "editor", "*", "update")
        const editor = (yield* Effect.flatMap(baseUrl, (base) => signedInMember(base, workspace, "editor"))).client
        const target = yield* createRecord(client, company, { name: "Kept", website: "https://kept.example" })
        const status = (call: ReturnType<typeof erase>) => Effect.map(refusal(call), (refused) => refused.status)

        expect(yield* status(erase(editor, company, target.id, ["website"]))).toBe(403)
        expect(yield* status(erase(client, company, crypto.randomUUID(), ["website"]))).toBe(404)
        expect(yield* status(erase(client, company, "not-a-uuid", ["website"]))).toBe(404)
        expect(yield* status(erase(client, "crm/nothing", target.id, ["website"]))).toBe(404)
        for (const bad of ["nope", "website.deeper", "address..street"]) {
          expect(yield* status(erase(client, company, target.id, [bad])), bad).toBe(400)
        }
        // What the contract's client would not send: an empty path, too many paths.
        const raw = (fields: ReadonlyArray<string>) =>
          Effect.map(
            client.post(`/api/records/${company}/${target.id}/erase`, { fields }),
            (response) => response.status
          )
        expect(yield* raw([""])).toBe(400)
        expect(yield* raw(Array.from({ length: 65 }, (_, i) => `f${i}`))).toBe(400)
        const aDeal = yield* createRecord(client, deal, { title: "T", lineItems: [{ id: "l1", product: "p" }] })
        expect(yield* status(erase(client, deal, aDeal.id, ["lineItems.id"]))).toBe(400)
        expect(yield* status(erase(client, deal, aDeal.id, ["address.nope"]))).toBe(400)
        const stale = yield* refusal(erase(client, company, target.id, ["website"], { "if-match": versionTag(7) }))
        expect(stale.status).toBe(412)
        const required = yield* refusal(erase(client, company, target.id, ["name"]))
        expect(required.status).toBe(422)
        expect(JSON.stringify(required.body)).toContain("erase the whole record")
        const draft = yield* createRecord(client, company, { name: "Draft", website: "https://draft.example" }, true)
        expect(yield* status(erase(client, company, draft.id, ["website"]))).toBe(409)

        // Nothing of it was written.
        expect((yield* recordsOf(client, company).get(target.id).pipe(Effect.orDie)).body.values).toEqual({
          name: "Kept",
          website: "https://kept.example"
        })
        expect((yield* entriesOf(client, company, target.id)).map((entry) => entry.operation)).toEqual(["created"])
      })
  )

  it.effect("the command line erases as the operator, in this process", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const { client } = yield* admin(workspace)
      const secret = `https://cli-${uniqueSuffix()}.example`
      const target = yield* createRecord(client, company, { name: "CLI Co", website: secret })
      const run = yield* runCli(
        "audit",
        "erase",
        "--workspace",
        workspace.slug,
        "--record",
        `${company}/${target.id}`,
        "--field",
        "website"
      )
      expect(Exit.isSuccess(run.exit), JSON.stringify(run.stderr)).toBe(true)
      expect(run.stdout.join("\n")).toMatch(/^erased website of crm\/company \S+: 2 values in 2 audit rows/)
      expect(yield* liveRowsHolding(workspace, secret)).toEqual([])
      yield* expectVerifies(workspace)
      const [, , erased] = yield* entriesOf(client, company, target.id)
      expect(erased).toMatchObject({ operation: "erased", actor: { kind: "system", name: "operator" } })

      const bad = yield* runCli("audit", "erase", "--workspace", workspace.slug, "--record", "crm/company")
      expect(Exit.isFailure(bad.exit)).toBe(true)
    })
  )
})
