import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { Schema } from "effect"
import { BroadcastStatus } from "./BroadcastStatus"
import { apiErrors, errorFields } from "./errors"

export const ComponentHealth = Schema.Struct({
  status: Schema.Literals(["up", "down"]),
  kind: Schema.String
})

/**
 * The read replica (`DATABASE_READ_URL`), when there is one. Its state never
 * makes the service unhealthy or not ready: while it is `down` or `lagging`
 * the reads it would serve go to the primary.
 */
export const ReplicaHealth = Schema.Struct({
  status: Schema.Literals(["up", "lagging", "down"]),
  /** How long the replica has been missing WAL the primary had written, at its last check (about every second). */
  lagMs: Schema.NullOr(Schema.Number),
  /** Its last replayed WAL position. */
  replayLsn: Schema.NullOr(Schema.String)
})

/**
 * How the workspace feed takes its positions (docs/feed.md, "Order"): `lock`, in each unit's INSERT; `wal`, from
 * the logical replication slot `slot` after COMMIT. In WAL mode: whether this instance reads the slot (`holder`),
 * the WAL the slot retains (`slotLagBytes`; null: the slot is gone), the committed rows waiting for positions, all
 * workspaces (`unpositionedRows`), both measured every 2 s, and on the holder the last batch's commit-to-position
 * delay (`delayMs`).
 */
export const FeedHealth = Schema.Struct({
  mode: Schema.Literals(["lock", "wal"]),
  slot: Schema.NullOr(Schema.String),
  holder: Schema.Boolean,
  slotLagBytes: Schema.NullOr(Schema.Number),
  unpositionedRows: Schema.NullOr(Schema.Number),
  delayMs: Schema.NullOr(Schema.Number)
})

const report = {
  database: ComponentHealth,
  pubsub: ComponentHealth,
  /** The broadcast subscription's outages and the hints dropped, since start-up. */
  broadcast: BroadcastStatus,
  replica: Schema.optionalKey(ReplicaHealth),
  feed: FeedHealth
}

export class HealthReport extends Schema.Class<HealthReport>("HealthReport")(report) {}

/** 503 when the database or the shared pub/sub store does not answer; the body says which. */
export class Unhealthy extends Schema.TaggedError<Unhealthy>()(
  "Unhealthy",
  { ...errorFields, ...report },
  { httpApiStatus: 503 }
) {}

/** The process runs and answers. */
export class Liveness extends Schema.Class<Liveness>("Liveness")({ status: Schema.Literal("live") }) {}

/**
 * Ready for new work: PostgreSQL answered within its budget and the instance
 * is not draining. `degraded`: the pub/sub store is down, so broadcasts and
 * presence across instances suffer, but writes and reads still work.
 */
export class ReadinessReport extends Schema.Class<ReadinessReport>("ReadinessReport")({
  status: Schema.Literals(["ready", "degraded"]),
  draining: Schema.Boolean,
  ...report
}) {}

/** 503: PostgreSQL did not answer within its budget, or the instance is draining (shutting down). */
export class NotReady extends Schema.TaggedError<NotReady>()(
  "NotReady",
  { ...errorFields, draining: Schema.Boolean, ...report },
  { httpApiStatus: 503 }
) {}

export class HealthApi extends HttpApiGroup.make("health")
  .add(
    HttpApiEndpoint.get("health", "/health", {
      success: HealthReport,
      error: [...apiErrors, Unhealthy]
    }).annotate(OpenApi.Summary, "Whether the database and the pub/sub store answer")
  )
  .add(
    HttpApiEndpoint.get("live", "/health/live", { success: Liveness, error: apiErrors }).annotate(
      OpenApi.Summary,
      "Liveness: 200 while the process runs"
    )
  )
  .add(
    HttpApiEndpoint.get("ready", "/health/ready", {
      success: ReadinessReport,
      error: [...apiErrors, NotReady]
    }).annotate(
      OpenApi.Summary,
      "Readiness: 200 when PostgreSQL answers within 1 s and the instance is not draining (pub/sub down: degraded, still 200)"
    )
  ) {}
