import { SqlClient } from "effect/sql"
import { Context, Effect, Layer, Option, Schema } from "effect"
import type { Cause } from "../api/Cause"
import { ErasedRecord } from "../api/Erasure"
import { Conflict, NotFound, UnprocessableEntity } from "../api/errors"
import { JsonObject } from "../api/Json"
import type { RecordValues } from "../api/Json"
import { CurrentActor, withCause } from "../context/Frames"
import { MissingActor } from "../context/MissingActor"
import { excerpt } from "../messages/inputExcerpt"
import { PluginRegistry } from "../plugins/PluginRegistry"
import { Records } from "../records/Records"
import { CurrentUnit } from "../unitOfWork/CurrentUnit"
import { eraseAuditRows } from "./AuditRowsErasure"
import { scrubIdempotentAnswers, scrubQueuedRuns } from "./ErasedCopies"
import type { ErasedTarget } from "./ErasedCopies"
import type { ErasedPath } from "./erasurePaths"
import { clearingPatch, erasedPaths, withoutPaths } from "./erasurePaths"

/** What an erasure asks for: a record and field paths (none: every value of it). */
export interface ErasureRequest {
  readonly businessObject: string
  readonly id: string
  readonly fields: ReadonlyArray<string>
}

/** Ids are UUIDs: anything else names no live record (and must not reach a uuid cast). */
const isRecordId = (id: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)

const LiveRecord = Schema.Struct({
  state: Schema.Literals(["draft", "operational", "archived"]),
  values: JsonObject,
  version: Schema.NumberFromString
})
const decodeLive = Schema.decodeUnknownEffect(Schema.Array(LiveRecord))

const TimelineFacts = Schema.Struct({ rows: Schema.Int, lastVersion: Schema.NullOr(Schema.NumberFromString) })
const decodeFacts = Schema.decodeUnknownEffect(Schema.Array(TimelineFacts))

const isRequired = ({ field }: ErasedPath) =>
  field.kind !== "struct" && field.kind !== "collection" && field.required === true

const make = Effect.gen(function* () {
  const registry = yield* PluginRegistry
  const records = yield* Records
  const sql = yield* SqlClient.SqlClient

  /**
   * Step 1 of an erasure: a live record holding values of `paths` written
   * as any write is, those fields cleared, or, for every value, the record
   * deleted. The record's version after it (null: deleted), and the version
   * the `erased` row names.
   */
  const clearLive = (
    { businessObject, id }: ErasureRequest,
    live: typeof LiveRecord.Type,
    paths: ReadonlyArray<ErasedPath>,
    cause: Cause
  ) =>
    Effect.gen(function* () {
      const named = `the ${excerpt(businessObject)} record ${excerpt(id)}`
      if (live.state === "draft") {
        return yield* new Conflict({
          message: `${named} is a draft: it has no history to erase (clear its fields with an update, or delete it)`
        })
      }
      if (paths.length === 0) {
        yield* records.remove(businessObject, id).pipe(withCause(cause))
        // A deletion takes a version of its own, one above the last.
        return { version: null, erasedVersion: live.version + 1 }
      }
      const { patch, clearing } = clearingPatch(live.values, paths)
      if (clearing.length === 0) return { version: live.version, erasedVersion: live.version }
      const required = clearing.filter(isRequired)
      if (required.length > 0) {
        return yield* new UnprocessableEntity({
          message: `${required.map((path) => path.text).join(", ")} of ${named} ${required.length === 1 ? "is" : "are"} required: a required field cannot be erased alone; erase the whole record (no fields: the record is deleted, every value erased)`
        })
      }
      if (live.state === "archived") {
        return yield* new Conflict({
          message: `${named} is archived and holds the values: restore it first, or erase the whole record`
        })
      }
      const updated = yield* records.update(businessObject, id, patch).pipe(withCause(cause))
      return { version: updated.version, erasedVersion: updated.version }
    })

  /**
   * Inside a unit of work: erases values of a record from every snapshot and
   * diff of its timeline, keeping each value's commitment so the ledger
   * still verifies (docs/ledger.md, "Erasure"). In order, all in the unit:
   *
   * 1. a live record holding any of the values is written as any write is
   *    (`clearLive`), its cause the action `<ns>/<name>/erase` naming the
   *    paths;
   * 2. one `erased` row on its timeline: who, when, which paths, never a
   *    value;
   * 3. the unit's rows written now (its flush, early), then every row of the
   *    record rewritten with the values erased (the rows just written too:
   *    the update's diff holds the old value);
   * 4. the copies of the record outside its timeline scrubbed: stored
   *    answers of idempotent writes, workflow runs in the durable queue (this
   *    unit's own are taken out before they are queued).
   *
   * The broadcast is the unit's: its events (the write's, and the erasure's
   * own) make the record's `changed` hint after COMMIT.
   */
  const erase = (request: ErasureRequest) =>
    Effect.gen(function* () {
      const { businessObject, id } = request
      const unit = yield* CurrentUnit
      const { workspace } = unit
      const registered = yield* Option.match(registry.find(businessObject), {
        onNone: () => Effect.fail(new NotFound({ message: `unknown business object: ${excerpt(businessObject)}` })),
        onSome: Effect.succeed
      })
      const paths = yield* erasedPaths(registered.definition.fields, request.fields)
      const live = isRecordId(id)
        ? (yield* sql`SELECT state, values, version::text AS version FROM ${sql(workspace.table("records"))}
          WHERE business_object = ${businessObject} AND id = ${id}::uuid FOR UPDATE`.pipe(
            Effect.flatMap(decodeLive),
            Effect.orDie
          ))[0]
        : undefined
      const [facts] = yield* sql`SELECT count(*)::int AS rows, max(record_version)::text AS last_version
      FROM ${sql(workspace.table("audit_entries"))}
      WHERE business_object = ${businessObject} AND business_object_id = ${id}`.pipe(
        Effect.flatMap(decodeFacts),
        Effect.orDie
      )
      if (live === undefined && (facts?.rows ?? 0) === 0) {
        return yield* new NotFound({ message: `no ${excerpt(businessObject)} record ${excerpt(id)}` })
      }
      const cause: Cause = {
        kind: "action",
        action: `${businessObject}/erase`,
        erase: { fields: paths.map((path) => path.text) }
      }
      const { version, erasedVersion } =
        live === undefined
          ? { version: null, erasedVersion: facts?.lastVersion ?? 0 }
          : yield* clearLive(request, live, paths, cause)
      const target: ErasedTarget = { workspace, businessObject, id, paths: paths.map((path) => path.path) }
      scrubOutbox(unit.outbox, target)
      const actor = yield* CurrentActor
      if (Option.isNone(actor)) {
        return yield* Effect.die(new MissingActor({ while: `erasing values of ${businessObject} ${id}` }))
      }
      const entry = crypto.randomUUID()
      yield* unit.staging.stage({
        id: entry,
        actor: actor.value,
        correlationId: unit.correlationId,
        businessObject,
        businessObjectId: id,
        recordVersion: erasedVersion,
        operation: "erased",
        cause
      })
      unit.outbox.push({
        workspace,
        operation: "erased",
        businessObject,
        businessObjectId: id,
        version: erasedVersion,
        before: null,
        after: null,
        cause
      })
      // The rows this unit wrote hold values too (the update's diff, the deletion's snapshot): written first.
      yield* unit.staging.flush
      const erased = yield* eraseAuditRows(workspace, businessObject, id, target.paths)
      yield* scrubIdempotentAnswers(target)
      yield* scrubQueuedRuns(target)
      return new ErasedRecord({
        businessObject,
        id,
        fields: paths.map((path) => path.text),
        entry,
        rows: erased.rows,
        values: erased.values,
        version
      })
    }).pipe(Effect.provideService(SqlClient.SqlClient, sql))

  return { erase } as const
})

/** Erasure of a record's values from its whole history (docs/ledger.md, "Erasure"): `erase` runs in a unit of work. */
export class Erasure extends Context.Service<Erasure, Effect.Success<typeof make>>()("Erasure") {
  static readonly layer = Layer.effect(Erasure, make).pipe(Layer.provide(Records.layer))
}

/** This unit's events of the record, before they are queued for workflows: the values taken out. */
const scrubOutbox = (outbox: CurrentUnit["Service"]["outbox"], target: ErasedTarget) => {
  const without = (values: RecordValues | null) => (values === null ? null : withoutPaths(values, target.paths))
  outbox.forEach((event, index) => {
    if (event.businessObject !== target.businessObject || event.businessObjectId !== target.id) return
    outbox[index] = { ...event, before: without(event.before), after: without(event.after) }
  })
}
