import { Context, Effect, Layer, Option, Result } from "effect"
import { auditListener } from "../audit/AuditListener"
import { AppConfig } from "../config/AppConfig"
import type { Operation } from "../api/Cause"
import { CurrentCause, withCause } from "../context/Frames"
import { jsonEquals } from "../api/Json"
import { diffValues } from "../diff"
import type { RecordValues } from "../api/Json"
import { BadRequest, Conflict, NotFound, PreconditionFailed, preconditionEntriesLimit } from "../api/errors"
import type { UnprocessableEntity } from "../api/errors"
import { linksIn } from "../api/FieldIssues"
import type { LinkReference } from "../api/FieldIssues"
import type { VersionPrecondition } from "../api/EntityTag"
import { Timeline } from "../audit/Timeline"
import type { BusinessObjectEvent } from "../events/BusinessObjectEvent"
import { JobQueue } from "../jobs/JobQueue"
import type { PluginEffect } from "../plugins/Plugin"
import { PluginJobs } from "../plugins/PluginJobs"
import { PluginRecords } from "../plugins/PluginRecords"
import type { WriteError } from "../plugins/PluginRecords"
import type { RecordState, StoredRecord } from "../api/StoredRecord"
import { PluginRegistry } from "../plugins/PluginRegistry"
import type { RegisteredBusinessObject } from "../plugins/PluginRegistry"
import type { Workspace } from "../api/Workspace"
import { CurrentUnit } from "../unitOfWork/CurrentUnit"
import { RecordStore } from "./RecordStore"
import type { WrittenRecord } from "./RecordStore"
import { checkFieldRules, checkRecordLimits, mergeValues, refuseIssues, validateValues } from "./RecordValidation"
import { brokenLinks, idsByTarget, newLinks } from "./RecordLinks"
import { assignEntryIds } from "./EntryIds"
import { excerpt } from "../messages/inputExcerpt"
import { LinkingRecords, RecordBacklinks, RecordList } from "../api/RecordQuery"
import { decodeListCursor, encodeListCursor } from "./ListCursor"
import { planList } from "./ListPlan"

/** A list request as the endpoint decodes it (`RecordListQuery`). */
export interface ListQuery {
  readonly limit: number
  readonly sort?: string | undefined
  readonly order?: "asc" | "desc" | undefined
  readonly filter?: ReadonlyArray<string> | undefined
  readonly q?: string | undefined
  readonly cursor?: string | undefined
}

/** How deep listeners may cascade (A -> B -> C ...) before the unit is failed as a runaway. */
const maxCascadeDepth = 16

const CascadeDepth = Context.Reference<number>("CascadeDepth", { defaultValue: () => 0 })

const make = Effect.gen(function* () {
  const store = yield* RecordStore
  const timeline = yield* Timeline
  const registry = yield* PluginRegistry
  const jobs = yield* JobQueue
  const { maxRecordBytes } = yield* AppConfig

  const businessObjectOf = (name: string) =>
    Option.match(registry.find(name), {
      onNone: () => Effect.fail(new NotFound({ message: `unknown business object: ${excerpt(name)}` })),
      onSome: Effect.succeed
    })

  const notFound = (businessObject: string, id: string) =>
    new NotFound({ message: `no ${excerpt(businessObject)} record ${excerpt(id)}` })

  /** The record, locked for the rest of the unit. */
  const locked = (workspace: Workspace, businessObject: string, id: string) =>
    store
      .find(workspace, businessObject, id, true)
      .pipe(
        Effect.flatMap(
          Option.match({ onNone: () => Effect.fail(notFound(businessObject, id)), onSome: Effect.succeed })
        )
      )

  /**
   * Each link names an operational record of its target, in this workspace:
   * 422 otherwise. The targets found stay share-locked until the unit
   * commits, so none is deleted or archived under a write that links it.
   */
  const checkLinks = (workspace: Workspace, businessObject: string, references: ReadonlyArray<LinkReference>) =>
    Effect.gen(function* () {
      if (references.length === 0) return
      yield* refuseIssues(businessObject, brokenLinks(references, yield* lockTargets(workspace, references)))
    })

  /** The linked records' states by target and id, share-locked: one statement per target business object. */
  const lockTargets = (workspace: Workspace, references: ReadonlyArray<LinkReference>) =>
    Effect.gen(function* () {
      const found = new Map<string, ReadonlyMap<string, RecordState>>()
      for (const [target, ids] of idsByTarget(references)) {
        const rows = yield* store.lockLinked(workspace, target, ids)
        found.set(target, new Map(rows.map((row) => [row.id, row.state])))
      }
      return found
    })

  /**
   * Inside a unit, before a write on one record: locks the record for the
   * rest of the unit and fails with 412 unless it is at the version the
   * caller expects (`If-Match`), telling its version now and the timeline
   * entries written since. Checked under the row lock, in the write's
   * transaction: of two writers expecting one version, the second reads
   * the first's committed version once it holds the lock, and gets the 412.
   * A record deleted since that version is a 412 too (its timeline says who
   * deleted it); one that never was is left to the write (a 404).
   */
  const requireVersion = (businessObject: string, id: string, expected: VersionPrecondition) =>
    Effect.gen(function* () {
      if (expected._tag === "AnyVersion") return
      yield* businessObjectOf(businessObject)
      const { workspace } = yield* CurrentUnit
      const found = yield* store.find(workspace, businessObject, id, true)
      const now = Option.isSome(found) ? found.value.version : null
      if (now === expected.version) return
      const since = yield* timeline.since(workspace, businessObject, id, expected.version, preconditionEntriesLimit)
      // Never there, or gone without a trace (a draft): the write itself answers 404.
      if (now === null && since.entries.length === 0) return
      const record = `the ${excerpt(businessObject)} record ${excerpt(id)}`
      return yield* new PreconditionFailed({
        message:
          now === null
            ? `${record} was deleted after version ${expected.version}: nothing was written`
            : `${record} is at version ${now}, not ${expected.version}: nothing was written`,
        currentVersion: now,
        entries: since.entries,
        moreEntries: since.moreEntries
      })
    })

  const requireState = (record: StoredRecord, allowed: ReadonlyArray<RecordState>, verb: string) =>
    allowed.includes(record.state)
      ? Effect.void
      : Effect.fail(
          new Conflict({
            message: `cannot ${verb} ${record.state === "draft" ? "a" : "an"} ${record.state} ${record.businessObject} record`
          })
        )

  /** One event, to the audit listener first, then to every matching plugin listener in an event frame. */
  const dispatch = (
    registered: RegisteredBusinessObject,
    operation: Operation,
    record: WrittenRecord,
    before: RecordValues | null,
    after: RecordValues | null
  ) =>
    Effect.gen(function* () {
      const depth = yield* CascadeDepth
      if (depth >= maxCascadeDepth) {
        return yield* Effect.die(
          new Error(`listener cascade deeper than ${maxCascadeDepth} at ${record.businessObject}`)
        )
      }
      const unit = yield* CurrentUnit
      const event: BusinessObjectEvent = {
        workspace: unit.workspace,
        operation,
        businessObject: record.businessObject,
        businessObjectId: record.id,
        // A deletion takes a version of its own, one above the last: "the entries since v" then include it.
        version: operation === "deleted" ? record.version + 1 : record.version,
        before,
        after,
        cause: yield* CurrentCause
      }
      unit.outbox.push(event)
      yield* auditListener(event, registered.definition.fields)
      const frame = withCause({
        kind: "event",
        businessObject: event.businessObject,
        businessObjectId: event.businessObjectId,
        operation
      })
      const listeners = registry.listenersFor(record.businessObject, operation)
      if (listeners.length === 0) return
      const ports = yield* pluginPortsInUnit
      for (const listener of listeners) {
        yield* listener
          .run(event)
          .pipe(
            frame,
            Effect.provide(ports),
            Effect.provideService(CascadeDepth, depth + 1),
            Effect.withSpan(`listener ${listener.name}`)
          )
      }
    })

  const create = (businessObject: string, input: unknown, options: { readonly draft?: boolean } = {}) =>
    Effect.gen(function* () {
      const registered = yield* businessObjectOf(businessObject)
      const { fields } = registered.definition
      const values = mergeValues({}, assignEntryIds(fields, yield* validateValues(businessObject, fields, input)))
      yield* checkFieldRules(businessObject, fields, values, options.draft ? "draft" : "whole")
      yield* checkRecordLimits(businessObject, values, maxRecordBytes)
      const { workspace } = yield* CurrentUnit
      yield* checkLinks(workspace, businessObject, linksIn(fields, values))
      const record = yield* store.insert(workspace, businessObject, options.draft ? "draft" : "operational", values)
      if (record.state === "operational") yield* dispatch(registered, "created", record, null, record.values)
      return record
    })

  /**
   * Operational records of one business object, checked as `create` checks
   * each, then written by ONE INSERT (a bulk write's creates: not a round trip
   * per record) and dispatched one by one, in order. The links of them all are
   * locked with one statement per target. When some are refused, nothing is
   * written and the failures (by position in `inputs`) are the result.
   */
  const createMany = (businessObject: string, inputs: ReadonlyArray<unknown>) =>
    Effect.gen(function* () {
      const registered = yield* businessObjectOf(businessObject)
      const { fields } = registered.definition
      const { workspace } = yield* CurrentUnit
      const failures: Array<{ readonly index: number; readonly error: WriteError }> = []
      const prepared: Array<RecordValues> = []
      const references: Array<ReadonlyArray<LinkReference>> = []
      for (const [index, input] of inputs.entries()) {
        const checked = yield* Effect.result(
          Effect.gen(function* () {
            const values = mergeValues({}, assignEntryIds(fields, yield* validateValues(businessObject, fields, input)))
            yield* checkFieldRules(businessObject, fields, values, "whole")
            yield* checkRecordLimits(businessObject, values, maxRecordBytes)
            return values
          })
        )
        if (Result.isFailure(checked)) failures.push({ index, error: checked.failure })
        else prepared[index] = checked.success
        references[index] = Result.isSuccess(checked) ? linksIn(fields, checked.success) : []
      }
      const found = yield* lockTargets(workspace, references.flat())
      for (const [index, links] of references.entries()) {
        const broken = brokenLinks(links, found)
        if (broken.length === 0) continue
        const refused = yield* Effect.flip(refuseIssues(businessObject, broken)).pipe(Effect.option)
        if (Option.isSome(refused)) failures.push({ index, error: refused.value })
      }
      if (failures.length > 0) return Result.fail(failures.sort((a, b) => a.index - b.index))
      const written = yield* store.insertMany(workspace, businessObject, prepared)
      for (const record of written) yield* dispatch(registered, "created", record, null, record.values)
      return Result.succeed(written)
    })

  /** Given fields replace the current ones (collections whole); an update that changes nothing writes nothing. */
  const update = (businessObject: string, id: string, input: unknown) =>
    Effect.gen(function* () {
      const registered = yield* businessObjectOf(businessObject)
      const { fields } = registered.definition
      const patch = assignEntryIds(fields, yield* validateValues(businessObject, fields, input))
      const { workspace } = yield* CurrentUnit
      const current = yield* locked(workspace, businessObject, id)
      yield* requireState(current, ["draft", "operational"], "update")
      yield* checkFieldRules(businessObject, fields, patch, current.state === "draft" ? "draft" : "patch")
      const values = mergeValues(current.values, patch)
      if (jsonEquals(current.values, values)) return current
      // An operational record changes only with an entry on its timeline: a write the diff cannot tell (a reorder
      // of collection entries, an empty collection where there was none) is no change, not a silent version bump.
      if (current.state === "operational" && diffValues(fields, current.values, values) === null) return current
      yield* checkRecordLimits(businessObject, values, maxRecordBytes)
      yield* checkLinks(workspace, businessObject, newLinks(linksIn(fields, patch), linksIn(fields, current.values)))
      const updated = yield* store.setValues(workspace, current, values)
      if (updated.state === "operational")
        yield* dispatch(registered, "updated", updated, current.values, updated.values)
      return updated
    })

  const remove = (businessObject: string, id: string) =>
    Effect.gen(function* () {
      const registered = yield* businessObjectOf(businessObject)
      const { workspace } = yield* CurrentUnit
      const current = yield* locked(workspace, businessObject, id)
      yield* store.remove(workspace, current)
      // A draft was never operational: its deletion leaves no trace on any timeline.
      if (current.state !== "draft") yield* dispatch(registered, "deleted", current, current.values, null)
    })

  /** What a record must pass to make the transition, beyond its state (publishing: the whole record's rules). */
  type Admission = (
    workspace: Workspace,
    registered: RegisteredBusinessObject,
    record: StoredRecord
  ) => Effect.Effect<void, UnprocessableEntity>

  const transition =
    (from: RecordState, to: RecordState, operation: Operation, verb: string, admit?: Admission) =>
    (businessObject: string, id: string) =>
      Effect.gen(function* () {
        const registered = yield* businessObjectOf(businessObject)
        const { workspace } = yield* CurrentUnit
        const current = yield* locked(workspace, businessObject, id)
        yield* requireState(current, [from], verb)
        if (admit !== undefined) yield* admit(workspace, registered, current)
        const moved = yield* store.setState(workspace, current, to)
        yield* dispatch(registered, operation, moved, operation === "created" ? null : current.values, moved.values)
        return moved
      })

  /** A draft is held to no `required` and may hold links that have since died: publishing checks it whole. */
  const publishable: Admission = (workspace, { definition: { fields } }, draft) =>
    Effect.andThen(
      checkFieldRules(draft.businessObject, fields, draft.values, "whole"),
      checkLinks(workspace, draft.businessObject, linksIn(fields, draft.values))
    )

  /** Publishing a draft is its birth on the timeline: the `created` row with the born snapshot. */
  const publish = transition("draft", "operational", "created", "publish", publishable)
  const archive = transition("operational", "archived", "archived", "archive")
  const restore = transition("archived", "operational", "restored", "restore")

  /** Runs a plugin action on one record inside an action frame. */
  const runAction = (businessObject: string, action: string, id: string) =>
    Effect.gen(function* () {
      const registered = yield* businessObjectOf(businessObject)
      const declaration = registered.actions.get(action)
      if (declaration === undefined) {
        return yield* new NotFound({ message: `unknown action ${excerpt(action)} on ${excerpt(businessObject)}` })
      }
      const target = yield* locked((yield* CurrentUnit).workspace, businessObject, id)
      return yield* runPlugin(declaration.run(target)).pipe(
        withCause({ kind: "action", action: `${businessObject}/${action}` })
      )
    })

  /** Reads need no unit of work. */
  const get = (workspace: Workspace, businessObject: string, id: string) =>
    Effect.gen(function* () {
      yield* businessObjectOf(businessObject)
      const found = yield* store.find(workspace, businessObject, id, false)
      if (Option.isNone(found)) return yield* notFound(businessObject, id)
      return found.value
    })

  const list = (workspace: Workspace, businessObject: string, limit: number) =>
    Effect.andThen(businessObjectOf(businessObject), store.list(workspace, businessObject, limit))

  /**
   * A page of a list: sorted, filtered and searched as `request` asks
   * (`ListPlan`), after its cursor. A request that names what the business
   * object does not have, or a cursor this list did not make, is a 400.
   */
  const listPage = (workspace: Workspace, businessObject: string, request: ListQuery) =>
    Effect.gen(function* () {
      const registered = yield* businessObjectOf(businessObject)
      const cursor = request.cursor === undefined ? undefined : decodeListCursor(request.cursor)
      if (cursor !== undefined && Option.isNone(cursor)) {
        return yield* new BadRequest({ message: "cursor: not a cursor this list made" })
      }
      const planned = planList(
        {
          businessObject,
          fields: registered.definition.fields,
          columns: registered.definition.columns,
          title: registered.title
        },
        { ...request, cursor: cursor === undefined ? undefined : cursor.value }
      )
      if (planned._tag === "Refused") return yield* new BadRequest({ message: planned.problems.join("; ") })
      const { plan } = planned
      const found = yield* store.page(workspace, businessObject, plan)
      return new RecordList({
        records: found.records,
        nextCursor:
          found.next === undefined
            ? null
            : encodeListCursor({ sort: plan.sort, order: plan.order, key: found.next.key, id: found.next.id })
      })
    })

  /**
   * What links to the record: per top-level link field pointing at its
   * business object, the newest `limit` records holding its id and their
   * count, for the business objects `mayRead` lets through.
   */
  const backlinks = <E, R>(
    workspace: Workspace,
    businessObject: string,
    id: string,
    limit: number,
    mayRead: (businessObject: string) => Effect.Effect<boolean, E, R>
  ) =>
    Effect.gen(function* () {
      yield* get(workspace, businessObject, id)
      const groups = yield* Effect.forEach(registry.linksTo(businessObject), (link) =>
        Effect.flatMap(mayRead(link.businessObject), (may) =>
          may
            ? Effect.map(store.linking(workspace, link.businessObject, link.field, id, limit), (found) => [
                new LinkingRecords({ ...link, ...found })
              ])
            : Effect.succeed([])
        )
      )
      return new RecordBacklinks({ groups: groups.flat() })
    })

  /**
   * The ports plugin code writes through, bound to the unit of work in
   * progress; the frames (actor, cause, cascade depth) stay those of the
   * fiber that calls them.
   */
  const pluginPortsInUnit: Effect.Effect<Context.Context<PluginRecords | PluginJobs>, never, CurrentUnit> = Effect.map(
    CurrentUnit,
    (unit) => {
      const inUnit = Effect.provideService(CurrentUnit, unit)
      return Context.make(PluginRecords, {
        get: (businessObject, id) => store.find(unit.workspace, businessObject, id, true),
        create: (businessObject, values) => inUnit(create(businessObject, values)),
        update: (businessObject, id, values) => inUnit(update(businessObject, id, values))
      }).pipe(Context.add(PluginJobs, { enqueue: (job, payload) => inUnit(jobs.enqueue(job, payload)) }))
    }
  )

  /** Runs plugin code (an action, a job, a workflow) in the unit of work in progress. */
  const runPlugin = <A>(effect: PluginEffect<A>) =>
    Effect.flatMap(pluginPortsInUnit, (ports) => Effect.provide(effect, ports))

  return {
    businessObjectOf,
    create,
    createMany,
    update,
    remove,
    publish,
    archive,
    restore,
    runAction,
    requireVersion,
    runPlugin,
    get,
    list,
    listPage,
    backlinks
  } as const
})

/**
 * Business object records with their lifecycle (draft -> operational <->
 * archived; delete). Writes run inside a unit of work: each operational
 * change dispatches one event, with whole state, to the audit listener and
 * then to the plugins' listeners, whose own writes join the same unit.
 */
export class Records extends Context.Service<Records, Effect.Success<typeof make>>()("Records") {
  static readonly layer = Layer.effect(Records, make).pipe(Layer.provide([RecordStore.layer, Timeline.layer]))
}
