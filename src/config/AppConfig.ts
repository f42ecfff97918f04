import { Config, Context, Duration, Effect, Layer, Option, Redacted } from "effect"

/** How the session cookie's Secure flag is chosen. `auto`: when the request came over HTTPS. */
export type CookieSecure = "auto" | "always" | "never"

export interface AppConfigShape {
  /** PostgreSQL URL; none means the embedded PGlite database. */
  readonly databaseUrl: Option.Option<Redacted.Redacted>
  /** Pool size for a real PostgreSQL. */
  readonly databasePoolSize: number
  /** Redis URL; none means the in-process broadcast bus and presence store (single instance only). */
  readonly redisUrl: Option.Option<Redacted.Redacted>
  readonly host: string
  readonly port: number
  /** Where the embedded database keeps its files. */
  readonly dataDir: string
  readonly sessionTtl: Duration.Duration
  readonly cookieSecure: CookieSecure
  /** Editors heartbeat at this interval; an editor lapses after three missed ones. */
  readonly presenceHeartbeat: Duration.Duration
  /** How often an idle broadcast stream gets a keep-alive comment line. */
  readonly broadcastKeepAlive: Duration.Duration
  /** The workflow engine's credential for its write route; none disables the route. */
  readonly engineToken: Option.Option<Redacted.Redacted>
  /**
   * Names this deployment's durable queues (jobs, workflow runs) in the shared
   * queue table, so deployments sharing a database never take each other's work.
   */
  readonly queuePrefix: string
  /** How often an idle worker looks for new jobs and workflow runs. */
  readonly queuePollInterval: Duration.Duration
  /** Attempts before a job or workflow run is left in the failed state. */
  readonly jobMaxAttempts: number
  /** The wait before the second attempt; it doubles with every further one. */
  readonly jobRetryBase: Duration.Duration
  /** How often each instance removes expired sessions and old completed-run markers. */
  readonly pruneInterval: Duration.Duration
  /** How long a completed job's or workflow run's marker is kept (at least; see `pruning.ts`). */
  readonly completedRunRetention: Duration.Duration
}

const positiveMillis = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.validate({ message: "must be a positive number of milliseconds", validation: (n) => n > 0 }),
    Config.withDefault(fallback),
    Config.map(Duration.millis)
  )

const config: Config.Config<AppConfigShape> = Config.all({
  databaseUrl: Config.option(Config.redacted("DATABASE_URL")),
  databasePoolSize: Config.integer("DATABASE_POOL_SIZE").pipe(
    Config.validate({ message: "must be between 1 and 100", validation: (n) => n >= 1 && n <= 100 }),
    Config.withDefault(10)
  ),
  redisUrl: Config.option(Config.redacted("REDIS_URL")),
  host: Config.string("HOST").pipe(Config.withDefault("127.0.0.1")),
  port: Config.port("PORT").pipe(Config.withDefault(3000)),
  dataDir: Config.string("DATA_DIR").pipe(Config.withDefault(".data/pglite")),
  sessionTtl: Config.duration("SESSION_TTL").pipe(Config.withDefault(Duration.days(7))),
  cookieSecure: Config.literal("auto", "always", "never")("COOKIE_SECURE").pipe(Config.withDefault("auto" as const)),
  presenceHeartbeat: positiveMillis("PRESENCE_HEARTBEAT_MS", 10_000),
  broadcastKeepAlive: positiveMillis("BROADCAST_KEEPALIVE_MS", 15_000),
  engineToken: Config.option(Config.redacted("ENGINE_TOKEN")).pipe(
    Config.validate({
      message: "must be at least 32 characters",
      validation: (token) => Option.isNone(token) || Redacted.value(token.value).length >= 32
    })
  ),
  queuePrefix: Config.string("QUEUE_PREFIX").pipe(
    Config.validate({ message: "must be 1-40 letters, digits, '-' or '_'", validation: (s) => /^[A-Za-z0-9_-]{1,40}$/.test(s) }),
    Config.withDefault("main")
  ),
  queuePollInterval: positiveMillis("QUEUE_POLL_MS", 500),
  jobMaxAttempts: Config.integer("JOB_MAX_ATTEMPTS").pipe(
    Config.validate({ message: "must be between 1 and 100", validation: (n) => n >= 1 && n <= 100 }),
    Config.withDefault(5)
  ),
  jobRetryBase: positiveMillis("JOB_RETRY_BASE_MS", 1_000),
  pruneInterval: positiveMillis("PRUNE_INTERVAL_MS", 3_600_000),
  completedRunRetention: Config.duration("COMPLETED_RUN_RETENTION").pipe(
    Config.validate({
      message: "must be at least 1 hour",
      validation: (retention) => Duration.greaterThanOrEqualTo(retention, Duration.hours(1))
    }),
    Config.withDefault(Duration.days(7))
  )
})

/** The service's whole configuration, read once from the environment. */
export class AppConfig extends Context.Tag("AppConfig")<AppConfig, AppConfigShape>() {
  static readonly layer = Layer.effect(AppConfig, config)
  static readonly make = (overrides: Partial<AppConfigShape> = {}) =>
    Layer.effect(AppConfig, Effect.map(config, (c) => ({ ...c, ...overrides })))
}
