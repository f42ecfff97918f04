import { Context, Effect, Exit, Layer } from "effect"
import { Conflict, NotFound } from "../api/errors"
import type { Workspace } from "../api/Workspace"
import { excerpt } from "../messages/inputExcerpt"
import { RecordStore } from "../records/RecordStore"
import { makeTickBatcher } from "./tickBatcher"

interface Check {
  readonly workspace: Workspace
  readonly businessObject: string
  readonly id: string
}

/** Checks of one business object of one workspace share one branch of the statement. */
const groupKey = (check: Pick<Check, "workspace" | "businessObject">) =>
  `${check.workspace.id}\u0000${check.businessObject}`

/**
 * Whether an editor may be present on a record: it exists (404 otherwise) and
 * is a draft or operational (an archived one is 409: restore it first), as a
 * PATCH requires. Checked on every heartbeat; the checks of heartbeats that
 * arrive together are answered by one statement, whatever their workspaces
 * and business objects (see `makeTickBatcher`, `RecordStore.states`), reading
 * the state only.
 */
export class EditableRecords extends Context.Service<EditableRecords>()("EditableRecords", {
  make: Effect.gen(function* () {
    const store = yield* RecordStore

    const answer = (check: Check, states: ReadonlyMap<string, string>): Exit.Exit<void, NotFound | Conflict> => {
      const state = states.get(check.id.toLowerCase())
      if (state === undefined)
        return Exit.fail(new NotFound({ message: `no ${excerpt(check.businessObject)} record ${excerpt(check.id)}` }))
      if (state === "archived")
        return Exit.fail(
          new Conflict({
            message: `an archived ${excerpt(check.businessObject)} record cannot be edited: restore it first`
          })
        )
      return Exit.void
    }

    const check = yield* makeTickBatcher((checks: ReadonlyArray<Check>) =>
      Effect.gen(function* () {
        const groups = new Map<string, { readonly first: Check; readonly ids: Array<string> }>()
        for (const one of checks) {
          const key = groupKey(one)
          const group = groups.get(key)
          if (group === undefined) groups.set(key, { first: one, ids: [one.id] })
          else group.ids.push(one.id)
        }
        const lookups = [...groups.values()].map(({ first, ids }) => ({
          workspace: first.workspace,
          businessObject: first.businessObject,
          ids
        }))
        const found = yield* store.states(lookups)
        const states = new Map<string, ReadonlyMap<string, string>>()
        lookups.forEach((lookup, index) => {
          states.set(groupKey(lookup), new Map((found[index] ?? []).map((row) => [row.id, row.state])))
        })
        return checks.map((one) => answer(one, states.get(groupKey(one)) ?? new Map()))
      })
    )

    return {
      require: (workspace: Workspace, businessObject: string, id: string) => check({ workspace, businessObject, id })
    } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make).pipe(Layer.provide(RecordStore.layer))
}
