import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { BusinessObjectGuard } from "../../auth/BusinessObjectGuard"
import { actorOf } from "../../auth/actorOf"
import { CurrentPrincipal } from "../../api/Principal"
import type { Permission } from "../../auth/Grants"
import { withActor } from "../../context/Frames"
import { Api } from "../../api/Api"
import { callerOf, created, Idempotency, keyedRequest, noContent, ok } from "../../idempotency/Idempotency"
import type { Answer, WriteCall } from "../../idempotency/Idempotency"
import type { CurrentUnit } from "../../unitOfWork/CurrentUnit"
import { UnitOfWork } from "../../unitOfWork/UnitOfWork"
import { RecordList } from "../../api/RecordsApi"
import { Records } from "../../records/Records"
import { StoredRecord } from "../../api/StoredRecord"
import type { WriteError } from "../../plugins/PluginRecords"

export const RecordsHttp = HttpApiBuilder.group(Api, "records", (handlers) =>
  Effect.gen(function* () {
    const records = yield* Records
    const guard = yield* BusinessObjectGuard
    const units = yield* UnitOfWork
    const idempotency = yield* Idempotency

    const authorize = (businessObject: string, permission: Permission) =>
      Effect.map(guard.require(businessObject, permission), ({ principal }) => principal.workspace)

    /**
     * A write: one unit of work in the principal's workspace, with the
     * principal as actor, run once per `Idempotency-Key` when it has one.
     */
    const write = <A, I>(
      businessObject: string,
      call: WriteCall,
      answer: Answer<A, I>,
      effect: Effect.Effect<A, WriteError, CurrentUnit>
    ) =>
      Effect.gen(function* () {
        const workspace = yield* authorize(businessObject, "update")
        const principal = yield* CurrentPrincipal
        const once = idempotency.run(keyedRequest(callerOf(principal), call), answer, effect)
        return yield* units.run(workspace, once).pipe(withActor(actorOf(principal)))
      })

    return handlers
      .handle("create", (call) => {
        const businessObject = `${call.path.namespace}/${call.path.name}`
        const create = records.create(businessObject, call.payload.values, { draft: call.payload.draft })
        return write(businessObject, call, created(StoredRecord), create)
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
      .handle("update", (call) => {
        const businessObject = `${call.path.namespace}/${call.path.name}`
        return write(
          businessObject,
          call,
          ok(StoredRecord),
          records.update(businessObject, call.path.id, call.payload.values)
        )
      })
      .handle("remove", (call) => {
        const businessObject = `${call.path.namespace}/${call.path.name}`
        return write(businessObject, call, noContent, records.remove(businessObject, call.path.id))
      })
      .handle("publish", (call) => {
        const businessObject = `${call.path.namespace}/${call.path.name}`
        return write(businessObject, call, ok(StoredRecord), records.publish(businessObject, call.path.id))
      })
      .handle("archive", (call) => {
        const businessObject = `${call.path.namespace}/${call.path.name}`
        return write(businessObject, call, ok(StoredRecord), records.archive(businessObject, call.path.id))
      })
      .handle("restore", (call) => {
        const businessObject = `${call.path.namespace}/${call.path.name}`
        return write(businessObject, call, ok(StoredRecord), records.restore(businessObject, call.path.id))
      })
      .handle("action", (call) => {
        const businessObject = `${call.path.namespace}/${call.path.name}`
        return write(
          businessObject,
          call,
          ok(StoredRecord),
          records.runAction(businessObject, call.path.action, call.payload.id)
        )
      })
  })
)
