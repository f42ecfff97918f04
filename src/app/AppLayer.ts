import { Effect, Formatter, Layer, Logger, type LogLevel, References } from "effect"
import { Agents } from "../agents/Agents"
import { RecordTitles } from "../audit/RecordTitles"
import { Correlation } from "../audit/Correlation"
import { Feed } from "../audit/Feed"
import { FeedWake } from "../audit/FeedWake"
import { Timeline } from "../audit/Timeline"
import { ApiKeys } from "../auth/ApiKeys"
import { Members } from "../auth/Members"
import { Memberships } from "../auth/Memberships"
import { Roles } from "../auth/Roles"
import { SignOuts } from "../auth/SignOuts"
import { Caches } from "../cache/Caches"
import { Users } from "../auth/Users"
import type { AppConfig, LogFormat } from "../config/AppConfig"
import { DatabaseLive } from "../db/Database"
import { SchemasMigrated } from "../db/SchemasMigrated"
import { FeedPositionsLive } from "../feedPositions/FeedPositionsLive"
import { OutboundBridgeLive } from "../outbound/OutboundBridgeLive"
import { ServerLive } from "../http/Server"
import { PluginRegistry } from "../plugins/PluginRegistry"
import { Presence } from "../presence/Presence"
import { Readiness } from "../health/Readiness"
import { Records } from "../records/Records"
import { RecordHistory } from "../records/RecordHistory"
import { Erasure } from "../ledger/Erasure"
import { Seeders } from "../seeding/Seeders"
import { guardJsonParse } from "../json/parseJson"
import { PubSubLive } from "./PubSubLive"
import { Idempotency } from "../idempotency/Idempotency"
import { JobQueue } from "../jobs/JobQueue"
import { DurableQueuesLive } from "../queue/DurableQueues"
import { FailedWork } from "../queue/FailedWork"
import { Workspaces } from "../tenancy/Workspaces"
import { WorkspaceWork } from "../tenancy/WorkspaceWork"
import { UnitOfWork } from "../unitOfWork/UnitOfWork"
import { DrainOnShutdownLive, GracefulShutdown } from "../shutdown/GracefulShutdown"
import { BackgroundWorkersLive } from "../workers/BackgroundWorkers"
import { WorkflowQueue } from "../workflows/WorkflowQueue"
import { printDemoHint, startUp } from "./Provisioning"
import { TracingLive } from "./TracingLive"
import { AdminSocketLive } from "./admin/AdminSocketLive"
import { EditableRecords } from "../presence/EditableRecords"

/** The producers of durable work: background jobs and workflow runs. */
const QueuesLive = Layer.merge(JobQueue.layer, WorkflowQueue.layer).pipe(Layer.provide(DurableQueuesLive))

const CoreServicesLive = Layer.mergeAll(
  Agents.layer,
  FailedWork.layer,
  Workspaces.layer,
  WorkspaceWork.layer,
  Users.layer,
  Memberships.layer,
  Members.layer,
  SignOuts.layer,
  Roles.layer,
  ApiKeys.layer,
  Records.layer,
  RecordHistory.layer,
  Erasure.layer,
  Timeline.layer,
  Feed.layer,
  FeedWake.layer,
  Correlation.layer,
  RecordTitles.layer,
  UnitOfWork.layer,
  Idempotency.layer,
  Presence.layer,
  EditableRecords.layer
).pipe(
  Layer.provide(OutboundBridgeLive),
  Layer.provideMerge(QueuesLive),
  Layer.provideMerge(Caches.layer),
  Layer.provideMerge(FeedPositionsLive)
)

/** The domain services, over whatever SQL client, pub/sub store and plugins are provided. */
export const ServicesLive = Seeders.layer.pipe(Layer.provideMerge(CoreServicesLive))

/** Storage ports: the database and the shared pub/sub store, chosen by configuration. */
export const StorageLive = Layer.mergeAll(DatabaseLive, PubSubLive, SchemasMigrated.layer)

type PubSubPorts = Layer.Success<typeof PubSubLive>

/** Migrations (and the demo, on a fresh embedded database) before the server listens and the workers start. */
const StartedServerLive = Layer.unwrap(
  Effect.map(startUp, (provisionedDemo) =>
    Layer.mergeAll(
      provisionedDemo
        ? ServerLive.pipe(Layer.tap((context) => Effect.provideContext(printDemoHint, context)))
        : ServerLive,
      BackgroundWorkersLive,
      AdminSocketLive
    )
  )
)

/**
 * The whole service, given its configuration (and, for tests, other plugins or
 * pub/sub ports). When its scope closes it drains first (`GracefulShutdown`).
 * Traces are exported when `OTEL_EXPORTER_OTLP_ENDPOINT` is set (`TracingLive`).
 */
export const appLayer = (
  config: Layer.Layer<AppConfig, unknown>,
  plugins: Layer.Layer<PluginRegistry> = PluginRegistry.layer,
  pubsub: Layer.Layer<PubSubPorts, unknown, AppConfig> = PubSubLive
) =>
  DrainOnShutdownLive.pipe(
    Layer.provideMerge(StartedServerLive),
    Layer.provideMerge(ServicesLive),
    Layer.provideMerge(plugins),
    Layer.provideMerge(Layer.mergeAll(DatabaseLive, pubsub, SchemasMigrated.layer)),
    Layer.provideMerge(Layer.merge(GracefulShutdown.layer, Readiness.layer)),
    // First, so that everything built after it (server, workers, pools) runs with its tracer, and last to close (a final flush).
    Layer.provideMerge(TracingLive),
    Layer.provideMerge(config),
    // Before anything reads a request or a row: what libraries parse reads keys as written (src/json/parseJson.ts).
    Layer.provideMerge(Layer.effectDiscard(Effect.sync(guardJsonParse)))
  )

/**
 * One JSON object a line, with the keys docs/operations.md lists (Effect 3's:
 * `logLevel`, where v4's structured logger says `level`).
 */
export const jsonFormat = Logger.formatStructured.pipe(
  Logger.map((entry) =>
    Formatter.formatJson({
      message: entry.message,
      logLevel: entry.level,
      timestamp: entry.timestamp,
      cause: entry.cause,
      annotations: entry.annotations,
      spans: entry.spans,
      fiberId: entry.fiberId
    })
  )
)

const loggers: Record<LogFormat, Layer.Layer<never>> = {
  json: Logger.layer([Logger.withConsoleLog(jsonFormat)]),
  pretty: Logger.layer([Logger.consolePretty()]),
  logfmt: Logger.layer([Logger.consoleLogFmt])
}

/** Log lines in `LOG_FORMAT` (JSON in production), at `LOG_LEVEL` (default Info). */
export const loggerLayer = (level: LogLevel.LogLevel, format: LogFormat = "json") =>
  Layer.merge(loggers[format], Layer.succeed(References.MinimumLogLevel, level))
