import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { NotFound } from "../errors"
import { Api } from "../http/Api"
import { asServerFaults } from "../http/serverFaults"
import { PluginRegistry } from "../plugins/PluginRegistry"
import { applyWrites, WrittenRecords } from "../records/RecordWrite"
import { Records } from "../records/Records"
import { Workspaces } from "../tenancy/Workspaces"
import { UnitOfWork } from "../unitOfWork/UnitOfWork"
import { asWorkflowRun } from "../workflows/asWorkflowRun"

/**
 * Writes of a workflow engine outside this process, with the same frames as
 * the in-process engine's runs. No permission guard: the engine's credential
 * is the authority, checked by `EngineAuthenticated`.
 */
export const EngineHttp = HttpApiBuilder.group(Api, "engine", (handlers) =>
  Effect.gen(function* () {
    const workspaces = yield* Workspaces
    const registry = yield* PluginRegistry
    const records = yield* Records
    const units = yield* UnitOfWork

    return handlers.handle("writes", ({ path, payload }) =>
      Effect.gen(function* () {
        const workspace = yield* workspaces.get(path.workspace)
        if (Option.isNone(registry.workflow(payload.workflowId))) {
          return yield* new NotFound({ message: `no plugin declares the workflow ${payload.workflowId}` })
        }
        const written = yield* units.run(workspace, applyWrites(records, payload.writes)).pipe(
          asWorkflowRun(payload.workflowId, payload.trigger),
          asServerFaults
        )
        return new WrittenRecords({ records: written })
      })
    )
  })
)
