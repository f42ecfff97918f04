import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { Schema } from "effect"
import { EventCause } from "./Cause"
import { apiErrors, BadRequest, Conflict, NotFound, UnprocessableEntity } from "./errors"
import { WriteHeaders } from "./IdempotencyKey"
import { RecordWrites, WrittenRecords } from "./RecordWrite"
import { EngineAuthenticated } from "./EngineAuth"

export class EngineWrites extends Schema.Class<EngineWrites>("EngineWrites")({
  /** The workflow whose run this is, `<namespace>/<id>`. */
  workflowId: Schema.String,
  /** The event that started the run: the cause of every row. */
  trigger: EventCause,
  writes: RecordWrites
}) {}

export class EngineApi extends HttpApiGroup.make("engine")
  .add(
    HttpApiEndpoint.post("writes", "/engine/workspaces/:workspace/writes", {
      params: { workspace: Schema.String },
      payload: EngineWrites,
      headers: WriteHeaders,
      success: WrittenRecords,
      error: [...apiErrors, BadRequest, Conflict, NotFound, UnprocessableEntity]
    }).annotate(
      OpenApi.Summary,
      "The workflow engine's write route: applies a workflow run's writes in one unit of work as " +
        "workflow:<workflowId>, caused by the trigger event. No permission guard runs; only ENGINE_TOKEN is accepted"
    )
  )
  .middleware(EngineAuthenticated)
  // Internal: the engine's route is not part of the public API document.
  .annotate(OpenApi.Exclude, true) {}
