import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { Arbitrary, Cause, Deferred, Effect, Exit, Fiber, Option, Ref, Schema } from "effect"
import type { AuditEntry } from "../../src/api/AuditEntry"
import type { CursorPosition } from "../../src/audit/Cursor"
import { decodeCursor } from "../../src/audit/Cursor"
import { Timeline } from "../../src/audit/Timeline"
import { withActor } from "../../src/context/Frames"
import { applyChanges, diffValues } from "../../src/diff"
import type { RecordValues } from "../../src/api/Json"
import { PluginRegistry } from "../../src/plugins/PluginRegistry"
import { Records } from "../../src/records/Records"
import type { Workspace } from "../../src/api/Workspace"
import { UnitOfWork } from "../../src/unitOfWork/UnitOfWork"
import { freshWorkspace, TestServices } from "../support/TestApp"

const deal = "crm/deal"
const someone = { kind: "user", id: "u-order", name: "Orderly", email: "orderly@example.com" } as const

const between = (minimum: number, maximum: number) => Schema.Int.check(Schema.isBetween({ minimum, maximum }))

const lineItem = Schema.Struct({ product: Schema.Literals(["p", "q"]), quantity: between(1, 3) })

/**
 * A patch of a deal: scalars, a decimal, a struct and a collection (no stage "won": no cascade, no workflow;
 * the title is required, so a patch never clears it). Every field may be absent; the collection is a
 * subset of the entries a, b, c.
 */
const patch = Arbitrary.schema(
  Schema.Struct({
    title: Schema.optionalKey(Schema.Literals(["Kiosk", "Fleet", "Pilot", "Renewal"])),
    amount: Schema.optionalKey(Schema.NullOr(Schema.Literals(["10.00", "12.50", "99.99"]))),
    stage: Schema.optionalKey(Schema.NullOr(Schema.Literals(["lead", "open", "proposal"]))),
    address: Schema.optionalKey(
      Schema.NullOr(
        Schema.Struct({ street: Schema.Literals(["Main 1", "Side 2"]), city: Schema.Literals(["Oslo", "Bergen"]) })
      )
    ),
    lineItems: Schema.optionalKey(
      Schema.Struct({
        a: Schema.optionalKey(lineItem),
        b: Schema.optionalKey(lineItem),
        c: Schema.optionalKey(lineItem)
      })
    )
  })
).pipe(
  Arbitrary.map(({ lineItems, ...values }) =>
    lineItems === undefined
      ? values
      : {
          ...values,
          lineItems: (["a", "b", "c"] as const).flatMap((id) => {
            const item = lineItems[id]
            return item === undefined ? [] : [{ id, ...item }]
          })
        }
  )
)

/** One unit of work: one to three updates, each on one of the records (by index). */
const unit = Arbitrary.array(Arbitrary.all({ record: Arbitrary.schema(between(0, 2)), values: patch }), {
  minLength: 1,
  maxLength: 3
})

const idOf = (value: unknown) =>
  typeof value === "object" && value !== null && "id" in value && typeof value.id === "string"
    ? value.id
    : JSON.stringify(value)

/**
 * The normal form the checks compare: arrays of entries as sets, by id, at
 * any depth (replay appends added entries where a stored record keeps the
 * sent order; the order of entries in a change bucket does not count).
 */
const normal = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(normal).sort((a, b) => idOf(a).localeCompare(idOf(b)))
  if (typeof value !== "object" || value === null) return value
  return Object.fromEntries(
    Object.entries(value)
      // Null, absent and an empty collection are all "no value".
      .filter(([, member]) => member !== null && !(Array.isArray(member) && member.length === 0))
      .map(([key, member]) => [key, normal(member)])
  )
}

/** One record's whole timeline as served, newest first, following nextCursor with a small limit. */
const servedTimeline = (workspace: Workspace, id: string) =>
  Effect.gen(function* () {
    const timeline = yield* Timeline
    const entries: Array<AuditEntry> = []
    let after: Option.Option<CursorPosition> = Option.none()
    for (;;) {
      const page = yield* timeline.page(workspace, deal, id, after, 4)
      entries.push(...page.entries)
      if (page.nextCursor === null) return entries
      after = decodeCursor(page.nextCursor)
    }
  })

/**
 * Replays a timeline oldest first (the created snapshot, then each diff) and
 * checks each update against the state before it: its diff is exactly the
 * change from that state (so every `from` is the state before it).
 */
const replay = (entries: ReadonlyArray<AuditEntry>) =>
  Effect.gen(function* () {
    const registry = yield* PluginRegistry
    const fields = Option.getOrThrow(registry.find(deal)).definition.fields
    const [born, ...updates] = [...entries].reverse()
    expect(born?.operation).toBe("created")
    let state: RecordValues = born?.record ?? {}
    for (const entry of updates) {
      expect(entry.operation).toBe("updated")
      const next = applyChanges(fields, state, entry.changes ?? null)
      expect(
        normal(diffValues(fields, state, next)),
        `update ${entry.id} does not start where the entry below it ends`
      ).toEqual(normal(entry.changes))
      state = next
    }
    return state
  })

layer(TestServices, { excludeTestServices: true })("timeline order is each record's commit order", (it) => {
  it.effect.prop(
    "concurrent units on a few records: each served timeline replays to its record, every from is the state before it",
    [between(2, 3), Arbitrary.array(unit, { minLength: 8, maxLength: 16 })],
    ([recordCount, units]) =>
      Effect.gen(function* () {
        const workspace = yield* freshWorkspace
        const records = yield* Records
        const unitsOfWork = yield* UnitOfWork
        const created = yield* Effect.forEach(
          Array.from({ length: recordCount }, (_, i) => i),
          (i) => unitsOfWork.run(workspace, records.create(deal, { title: `deal ${i}`, stage: "lead" }))
        )
        const recordId = (index: number) => created[index % recordCount]?.id ?? ""

        // Every unit at once. A unit writing several records takes them in one order (as careful code does): no deadlocks.
        const outcomes = yield* Effect.forEach(
          units,
          (writes) =>
            unitsOfWork
              .run(
                workspace,
                Effect.forEach(
                  [...writes].sort((a, b) => (a.record % recordCount) - (b.record % recordCount)),
                  (write) => records.update(deal, recordId(write.record), write.values),
                  { discard: true }
                )
              )
              .pipe(Effect.exit),
          { concurrency: "unbounded" }
        )
        for (const outcome of outcomes) if (Exit.isFailure(outcome)) expect.fail(Cause.pretty(outcome.cause))

        for (const record of created) {
          const entries = yield* servedTimeline(workspace, record.id)
          const replayed = yield* replay(entries)
          const stored = yield* records.get(workspace, deal, record.id)
          expect(normal(replayed)).toEqual(normal(stored.values))
        }
      }).pipe(Effect.scoped, withActor(someone)),
    { timeout: 180_000, arbitrary: { runs: 6 } }
  )

  it.effect(
    "a reader paging newest first while writers commit sees no row twice and misses none committed before its first page",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const workspace = yield* freshWorkspace
        const records = yield* Records
        const unitsOfWork = yield* UnitOfWork
        const timeline = yield* Timeline
        const target = yield* unitsOfWork.run(workspace, records.create(deal, { title: "watched", stage: "lead" }))
        const other = yield* unitsOfWork.run(workspace, records.create(deal, { title: "neighbour", stage: "lead" }))
        const committedIds = Effect.map(
          sql<{ readonly id: string }>`SELECT id::text AS id FROM ${sql(workspace.table("audit_entries"))}
          WHERE business_object = ${deal} AND business_object_id = ${target.id}`,
          (rows) => new Set(rows.map((row) => row.id))
        )

        // Eight writers keep committing on the record (some units also write its neighbour first) until the reader is done.
        const done = yield* Deferred.make<void>()
        const written = yield* Ref.make(0)
        const writer = (n: number) =>
          Effect.gen(function* () {
            for (let i = 0; !(yield* Deferred.isDone(done)); i++) {
              const values = { title: `writer ${n} step ${i}`, amount: `${n}.${String(i % 100).padStart(2, "0")}` }
              yield* unitsOfWork
                .run(
                  workspace,
                  Effect.gen(function* () {
                    if (i % 3 === 0) yield* records.update(deal, other.id, { title: `neighbour ${n} ${i}` })
                    yield* records.update(deal, target.id, values)
                  })
                )
                .pipe(Effect.result)
              yield* Ref.update(written, (count) => count + 1)
            }
          })
        const writers = yield* Effect.forEach(
          Array.from({ length: 8 }, (_, n) => writer(n)),
          (w) => Effect.forkChild(w)
        )

        // Start reading once the timeline is long enough to need many pages.
        while ((yield* committedIds).size < 40) yield* Effect.yieldNow
        const before = yield* committedIds
        const seen: Array<AuditEntry> = []
        let page = yield* timeline.page(workspace, deal, target.id, Option.none(), 3)
        const afterFirstPage = yield* committedIds
        seen.push(...page.entries)
        const writtenAtFirstPage = yield* Ref.get(written)
        while (page.nextCursor !== null) {
          page = yield* timeline.page(workspace, deal, target.id, decodeCursor(page.nextCursor), 3)
          seen.push(...page.entries)
        }
        const writtenWhileReading = (yield* Ref.get(written)) - writtenAtFirstPage
        yield* Deferred.succeed(done, undefined)
        yield* Fiber.joinAll(writers)

        // The writers really did commit while the reader paged.
        expect(writtenWhileReading).toBeGreaterThan(0)
        expect((yield* committedIds).size).toBeGreaterThan(afterFirstPage.size)
        const ids = seen.map((entry) => entry.id)
        expect(new Set(ids).size, "a row served twice").toBe(ids.length)
        const seenIds = new Set(ids)
        expect(
          [...before].filter((id) => !seenIds.has(id)),
          "rows committed before the first page, missed"
        ).toEqual([])
        // Nothing committed after the first page slipped under the cursor: the reader saw the timeline as it stood then.
        expect(
          ids.filter((id) => !afterFirstPage.has(id)),
          "rows committed after the first page, served below it"
        ).toEqual([])
        // And what it saw replays: every from is the state before it.
        yield* replay(seen)
      }).pipe(withActor(someone))
  )
})
