import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { BusinessObjectGuard } from "../auth/BusinessObjectGuard"
import { actorOf } from "../auth/actorOf"
import { CurrentPrincipal } from "../auth/Principal"
import type { Permission } from "../auth/Grants"
import { withActor } from "../context/Frames"
import { Api } from "../http/Api"
import { asServerFaults } from "../http/serverFaults"
import { UnitOfWork } from "../unitOfWork/UnitOfWork"
import { RecordList } from "./RecordsApi"
import { Records } from "./Records"
import type { InUnit } from "../unitOfWork/UnitOfWork"
import type { WriteError } from "../plugins/PluginRecords"

export const RecordsHttp = HttpApiBuilder.group(Api, "records", (handlers) =>
  Effect.gen(function* () {
    const records = yield* Records
    const guard = yield* BusinessObjectGuard
    const units = yield* UnitOfWork

    const authorize = (businessObject: string, permission: Permission) =>
      Effect.map(guard.require(businessObject, permission), ({ principal }) => principal.workspace)

    /** A write: one unit of work in the principal's workspace, with the principal as actor. */
    const write = <A>(businessObject: string, effect: Effect.Effect<A, WriteError, InUnit>) =>
      Effect.gen(function* () {
        const workspace = yield* authorize(businessObject, "update")
        const principal = yield* CurrentPrincipal
        return yield* units.run(workspace, effect).pipe(withActor(actorOf(principal)), asServerFaults)
      })

    return handlers
      .handle("create", ({ path, payload }) => {
        const businessObject = `${path.namespace}/${path.name}`
        return write(businessObject, records.create(businessObject, payload.values, { draft: payload.draft }))
      })
      .handle("list", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const businessObject = `${path.namespace}/${path.name}`
          const workspace = yield* authorize(businessObject, "read")
          return new RecordList({ records: yield* records.list(workspace, businessObject, urlParams.limit) })
        })
      )
      .handle("get", ({ path }) =>
        Effect.gen(function* () {
          const businessObject = `${path.namespace}/${path.name}`
          const workspace = yield* authorize(businessObject, "read")
          return yield* records.get(workspace, businessObject, path.id)
        })
      )
      .handle("update", ({ path, payload }) => {
        const businessObject = `${path.namespace}/${path.name}`
        return write(businessObject, records.update(businessObject, path.id, payload.values))
      })
      .handle("remove", ({ path }) => {
        const businessObject = `${path.namespace}/${path.name}`
        return write(businessObject, records.remove(businessObject, path.id))
      })
      .handle("publish", ({ path }) => {
        const businessObject = `${path.namespace}/${path.name}`
        return write(businessObject, records.publish(businessObject, path.id))
      })
      .handle("archive", ({ path }) => {
        const businessObject = `${path.namespace}/${path.name}`
        return write(businessObject, records.archive(businessObject, path.id))
      })
      .handle("restore", ({ path }) => {
        const businessObject = `${path.namespace}/${path.name}`
        return write(businessObject, records.restore(businessObject, path.id))
      })
      .handle("action", ({ path, payload }) => {
        const businessObject = `${path.namespace}/${path.name}`
        return write(businessObject, records.runAction(businessObject, path.action, payload.id))
      })
  })
)

