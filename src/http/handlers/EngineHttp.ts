import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { Effect, Option } from "effect"
import { NotFound } from "../../api/errors"
import { ServedApi } from "../ServedApi"
import { engineCaller, Idempotency, keyedRequest, ok } from "../../idempotency/Idempotency"
import { PluginRegistry } from "../../plugins/PluginRegistry"
import { applyWrites } from "../../records/applyWrites"
import { WrittenRecords } from "../../api/RecordWrite"
import { Records } from "../../records/Records"
import { Workspaces } from "../../tenancy/Workspaces"
import { UnitOfWork } from "../../unitOfWork/UnitOfWork"
import { asWorkflowRun } from "../../workflows/asWorkflowRun"
import { excerpt } from "../../messages/inputExcerpt"

/**
 * Writes of a workflow engine outside this process, with the same frames as
 * the in-process engine's runs. No permission guard: the engine's credential
 * is the authority, checked by `EngineAuthenticated`.
 */
export const EngineHttp = HttpApiBuilder.group(ServedApi, "engine", (handlers) =>
  Effect.gen(function* () {
    const workspaces = yield* Workspaces
    const registry = yield* PluginRegistry
    const records = yield* Records
    const units = yield* UnitOfWork
    const idempotency = yield* Idempotency

    return handlers.handle("writes", (call) =>
      Effect.gen(function* () {
        const { params, payload } = call
        const workspace = yield* workspaces.get(params.workspace)
        if (Option.isNone(registry.workflow(payload.workflowId))) {
          return yield* new NotFound({ message: `no plugin declares the workflow ${excerpt(payload.workflowId)}` })
        }
        const writeAll = Effect.map(
          applyWrites(records, payload.writes),
          (written) => new WrittenRecords({ records: written })
        )
        const once = idempotency.run(keyedRequest(engineCaller, call), ok(WrittenRecords), writeAll)
        return yield* units.run(workspace, once).pipe(asWorkflowRun(payload.workflowId, payload.trigger))
      })
    )
  })
)
