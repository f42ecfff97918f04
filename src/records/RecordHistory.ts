import { Context, Effect, Layer, Option } from "effect"
import type { RevertMode } from "../api/Cause"
import { Conflict, NotFound, UnprocessableEntity } from "../api/errors"
import type { AsOfPoint } from "../api/RecordHistory"
import { AsOfEntry, ChangedSince, RecordAsOf } from "../api/RecordHistory"
import type { Workspace } from "../api/Workspace"
import { History } from "../audit/History"
import { replay, restorePatch, undoPlan } from "../audit/replay"
import { withCause } from "../context/Frames"
import { excerpt } from "../messages/inputExcerpt"
import { PluginRegistry } from "../plugins/PluginRegistry"
import { CurrentUnit } from "../unitOfWork/CurrentUnit"
import { Records } from "./Records"
import { RecordStore } from "./RecordStore"

/** What a revert asks for (`POST .../:id/revert`). */
export interface RevertRequest {
  readonly entry: string
  readonly mode: RevertMode
  readonly force: boolean
}

const make = Effect.gen(function* () {
  const records = yield* Records
  const store = yield* RecordStore
  const history = yield* History
  const registry = yield* PluginRegistry

  const definitionOf = (businessObject: string) =>
    Option.match(registry.find(businessObject), {
      onNone: () => Effect.fail(new NotFound({ message: `unknown business object: ${excerpt(businessObject)}` })),
      onSome: (registered) => Effect.succeed(registered.definition)
    })

  const named = (businessObject: string, id: string) => `the ${excerpt(businessObject)} record ${excerpt(id)}`

  /** Why nothing stands at a point before the record's first entry. */
  const beforeFirst = (workspace: Workspace, businessObject: string, id: string, point: AsOfPoint) =>
    Effect.gen(function* () {
      if ((yield* history.all(workspace, businessObject, id)).length > 0) {
        return new NotFound({
          message: `${named(businessObject, id)} did not exist yet at ${excerpt(point._tag === "Instant" ? point.at : point.entry)}`
        })
      }
      const found = yield* store.find(workspace, businessObject, id, false)
      return new NotFound({
        message: Option.isSome(found)
          ? `${named(businessObject, id)} is a draft: it has no history until it is published`
          : `no ${excerpt(businessObject)} record ${excerpt(id)}`
      })
    })

  /** The record as it was just after entry `point`, or at the instant `point`: 404 when it did not exist then. */
  const asOf = (workspace: Workspace, businessObject: string, id: string, point: AsOfPoint) =>
    Effect.gen(function* () {
      const { fields } = yield* definitionOf(businessObject)
      const rows = yield* history.until(workspace, businessObject, id, point)
      if (Option.isNone(rows)) {
        return yield* new NotFound({
          message: `no entry ${excerpt(point._tag === "Entry" ? point.entry : "")} on the timeline of ${named(businessObject, id)}`
        })
      }
      const state = replay(fields, rows.value)
      if (state === undefined) return yield* yield* beforeFirst(workspace, businessObject, id, point)
      const { entry } = state
      if (state.state === "deleted") {
        return yield* new NotFound({
          message: `${named(businessObject, id)} was deleted at ${entry.at} (entry ${entry.id}): ask for a point before that`
        })
      }
      return new RecordAsOf({
        id,
        businessObject,
        state: state.state,
        version: entry.recordVersion,
        values: state.values,
        entry: new AsOfEntry({ id: entry.id, at: entry.at, actor: entry.actor })
      })
    })

  const notOnTimeline = (businessObject: string, id: string, entry: string) =>
    new UnprocessableEntity({ message: `no entry ${excerpt(entry)} on the timeline of ${named(businessObject, id)}` })

  /** The values a revert writes, read under the record's lock. */
  const revertPatch = (businessObject: string, id: string, request: RevertRequest) =>
    Effect.gen(function* () {
      const { fields } = yield* definitionOf(businessObject)
      const { workspace } = yield* CurrentUnit
      const locked = yield* store.find(workspace, businessObject, id, true)
      const rows = yield* history.all(workspace, businessObject, id)
      if (Option.isNone(locked)) {
        if (rows.some((row) => row.operation === "deleted")) {
          return yield* new Conflict({
            message: `${named(businessObject, id)} was deleted: a deleted record cannot be reverted (read it as it was with ?asOf= and create it anew)`
          })
        }
        return yield* new NotFound({ message: `no ${excerpt(businessObject)} record ${excerpt(id)}` })
      }
      if (request.mode === "restore") {
        const index = rows.findIndex((row) => row.id === request.entry)
        const state = index === -1 ? undefined : replay(fields, rows.slice(0, index + 1))
        if (state === undefined) return yield* notOnTimeline(businessObject, id, request.entry)
        return restorePatch(fields, state.values)
      }
      const plan = undoPlan(fields, rows, request.entry)
      switch (plan._tag) {
        case "NoSuchEntry":
          return yield* notOnTimeline(businessObject, id, request.entry)
        case "NotAnUpdate":
          return yield* new UnprocessableEntity({
            message: `entry ${excerpt(request.entry)} is ${plan.operation === "archived" ? "an" : "a"} ${plan.operation} entry: only an update's changes can be undone (mode "restore" goes back to the values as of an entry)`
          })
        case "Plan":
          if (plan.changedSince.length > 0 && !request.force) {
            return yield* new ChangedSince({
              message: `cannot undo entry ${excerpt(request.entry)}: ${plan.changedSince.join(", ")} changed again since; send force: true to overwrite ${plan.changedSince.length === 1 ? "it" : "them"}`,
              fields: plan.changedSince
            })
          }
          return plan.patch
      }
    })

  /**
   * Inside a unit of work: restores the record's values to those just
   * after `entry`, or undoes that entry's changes. One ordinary update
   * (the same rules, one `updated` row, none when nothing changes), whose
   * cause is the action `<businessObject>/revert` naming the entry.
   */
  const revert = (businessObject: string, id: string, request: RevertRequest) =>
    Effect.flatMap(revertPatch(businessObject, id, request), (patch) =>
      records.update(businessObject, id, patch).pipe(
        withCause({
          kind: "action",
          action: `${businessObject}/revert`,
          revert: { entry: request.entry, mode: request.mode }
        })
      )
    )

  return { asOf, revert } as const
})

/**
 * A record's past, acted on (docs/history.md): the record as it was at a
 * point of its timeline, rebuilt from the stored snapshots and diffs; and
 * reverts, each an ordinary update in the caller's unit of work.
 */
export class RecordHistory extends Context.Service<RecordHistory, Effect.Success<typeof make>>()("RecordHistory") {
  static readonly layer = Layer.effect(RecordHistory, make).pipe(
    Layer.provide([Records.layer, RecordStore.layer, History.layer])
  )
}
