import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { BroadcastStatus } from "../broadcast/BroadcastStatus"

export const ComponentHealth = Schema.Struct({
  status: Schema.Literal("up", "down"),
  kind: Schema.String
})

const report = {
  database: ComponentHealth,
  pubsub: ComponentHealth,
  /** The broadcast subscription's outages and the hints dropped, since start-up. */
  broadcast: BroadcastStatus
}

export class HealthReport extends Schema.Class<HealthReport>("HealthReport")(report) {}

/** 503 when the database or the shared pub/sub store does not answer; the body says which. */
export class Unhealthy extends Schema.TaggedError<Unhealthy>()(
  "Unhealthy",
  { message: Schema.String, ...report },
  HttpApiSchema.annotations({ status: 503 })
) {}

export class HealthApi extends HttpApiGroup.make("health").add(
  HttpApiEndpoint.get("health", "/health")
    .addSuccess(HealthReport)
    .addError(Unhealthy)
    .annotate(OpenApi.Summary, "Whether the database and the pub/sub store answer")
) {}
