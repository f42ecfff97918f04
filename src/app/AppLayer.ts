import { Effect, Layer, Logger, LogLevel } from "effect"
import { Timeline } from "../audit/Timeline"
import { ApiKeys } from "../auth/ApiKeys"
import { Memberships } from "../auth/Memberships"
import { Roles } from "../auth/Roles"
import { Users } from "../auth/Users"
import { AppConfig } from "../config/AppConfig"
import { DatabaseLive } from "../db/Database"
import { OutboundBridgeLive } from "../events/OutboundBridgeLive"
import { ServerLive } from "../http/Server"
import { PluginRegistry } from "../plugins/PluginRegistry"
import { Presence } from "../presence/Presence"
import { Records } from "../records/Records"
import { PubSubLive } from "../redis/PubSubLive"
import { Workspaces } from "../tenancy/Workspaces"
import { UnitOfWork } from "../unitOfWork/UnitOfWork"
import { printDemoHint, startUp } from "./Provisioning"

/** The domain services, over whatever SQL client, pub/sub store and plugins are provided. */
export const ServicesLive = Layer.mergeAll(
  Workspaces.Default,
  Users.Default,
  Memberships.Default,
  Roles.Default,
  ApiKeys.Default,
  Records.Default,
  Timeline.Default,
  UnitOfWork.Default,
  Presence.Default
).pipe(Layer.provide(OutboundBridgeLive))

/** Storage ports: the database and the shared pub/sub store, chosen by configuration. */
export const StorageLive = Layer.merge(DatabaseLive, PubSubLive)

type PubSubPorts = Layer.Layer.Success<typeof PubSubLive>

/** Migrations (and the demo, on a fresh embedded database) before the server listens. */
const StartedServerLive = Layer.unwrapEffect(
  Effect.map(startUp, (provisionedDemo) =>
    provisionedDemo ? ServerLive.pipe(Layer.tap((context) => Effect.provide(printDemoHint, context))) : ServerLive
  )
)

/** The whole service, given its configuration (and, for tests, other plugins or pub/sub ports). */
export const appLayer = (
  config: Layer.Layer<AppConfig, unknown>,
  plugins: Layer.Layer<PluginRegistry> = PluginRegistry.Default,
  pubsub: Layer.Layer<PubSubPorts, unknown, AppConfig> = PubSubLive
) =>
  StartedServerLive.pipe(
    Layer.provideMerge(ServicesLive),
    Layer.provideMerge(plugins),
    Layer.provideMerge(Layer.merge(DatabaseLive, pubsub)),
    Layer.provideMerge(config)
  )

/** JSON log lines, at `LOG_LEVEL` (default Info). */
export const loggerLayer = (level: LogLevel.LogLevel) =>
  Layer.merge(Logger.json, Logger.minimumLogLevel(level))
