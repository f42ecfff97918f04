import { Config, Context, Duration, Effect, Layer, LogLevel, Option, Redacted } from "effect"

/** How the session cookie's Secure flag is chosen. `auto`: when the request came over HTTPS. */
export type CookieSecure = "auto" | "always" | "never"

export interface AppConfigShape {
  /** PostgreSQL URL; none means the embedded PGlite database. */
  readonly databaseUrl: Option.Option<Redacted.Redacted>
  /** Pool size for a real PostgreSQL: the write pool (units of work, sign-in, migrations). */
  readonly databasePoolSize: number
  /** Pool size of the read pool (record and timeline reads, credential checks). */
  readonly databaseReadPoolSize: number
  /** How long a statement waits for a lock (row, table) before it fails: bounds a write stuck behind another. */
  readonly databaseLockTimeout: Duration.Duration
  /** How long one statement may run before PostgreSQL cancels it. */
  readonly databaseStatementTimeout: Duration.Duration
  /** How long a request waits for a connection (a free pool slot, or a new connection). */
  readonly databaseAcquireTimeout: Duration.Duration
  /** Names this instance's connections in `pg_stat_activity` (suffixed `/write`, `/read`, `/health`). */
  readonly databaseApplicationName: string
  /** Redis URL; none means the in-process broadcast bus and presence store (single instance only). */
  readonly redisUrl: Option.Option<Redacted.Redacted>
  readonly host: string
  readonly port: number
  /** Where the embedded database keeps its files. */
  readonly dataDir: string
  readonly sessionTtl: Duration.Duration
  /**
   * `AUTH_CACHE_TTL_MS`: how long sessions, grants, API keys and workspaces stay in an instance's
   * caches at most; changes invalidate them sooner, over the bus (docs/security.md, "Caches"). 0: no caches.
   */
  readonly authCacheTtl: Duration.Duration
  /** `AUTH_CACHE_CAPACITY`: entries each of those caches holds at most (the least recently used go first). */
  readonly authCacheCapacity: number
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
  /** How long an `Idempotency-Key` is remembered: a retry within it gets the first answer. */
  readonly idempotencyKeyTtl: Duration.Duration
  /** The largest request body a route takes unless it sets its own (413 beyond, checked before reading). */
  readonly maxBodyBytes: number
  /** The largest record, its values serialized as JSON (422 beyond). */
  readonly maxRecordBytes: number
  /** Origins besides the service's own whose cookie-signed writes are accepted (`https://app.example.com`). */
  readonly allowedOrigins: ReadonlyArray<string>
  /** Headers and body must have arrived within this time, else 408 and the connection is closed. */
  readonly requestTimeout: Duration.Duration
  /** `Strict-Transport-Security: max-age=<seconds>` on every response; none sends no such header. */
  readonly hstsMaxAge: Option.Option<number>
  /** Broadcast streams one session may hold open on one instance; opening one more closes its oldest. */
  readonly maxStreamsPerSession: number
  /** Each stream tells its client to reconnect after a delay drawn uniformly from this range (`retry:`). */
  readonly streamRetry: { readonly min: Duration.Duration; readonly max: Duration.Duration }
  /** A stream ends after this long, give or take 10% (drawn per stream), and its client reconnects. */
  readonly streamMaxLifetime: Duration.Duration
  /** Failed sign-ins an account (the email as typed, normalized) may have in `loginWindow` before sign-in is refused. */
  readonly loginMaxFailures: number
  /** How long failed sign-ins are remembered; each further refused window doubles the wait (up to 16 windows). */
  readonly loginWindow: Duration.Duration
  /** Sign-in attempts one client address may make per minute, right or wrong. */
  readonly loginMaxPerAddress: number
  /** Take the client address from `X-Forwarded-For` (the proxy's entry): only behind a proxy that sets it. */
  readonly trustProxy: boolean
  /**
   * How long a shutdown (SIGTERM, SIGINT) waits for in-flight requests,
   * broadcast streams and running jobs before it cuts what is left.
   */
  readonly drainTimeout: Duration.Duration
  /** How often each instance removes expired sessions and old completed-run markers. */
  readonly pruneInterval: Duration.Duration
  /** How long a completed job's or workflow run's marker is kept (at least; see `pruning.ts`). */
  readonly completedRunRetention: Duration.Duration
  /**
   * `REDIS_PREFIX`: starts every Redis key and channel of this deployment, so
   * deployments sharing a Redis never see each other's hints, presence or
   * sign-in counts; none derives it from the database (see `redisPrefixOf`).
   */
  readonly redisPrefix: Option.Option<string>
  /** `METRICS_TOKEN`: `/metrics` answers only `Authorization: Bearer <it>`; none: `/metrics` is a 404. */
  readonly metricsToken: Option.Option<Redacted.Redacted>
  /**
   * `OTEL_EXPORTER_OTLP_ENDPOINT`: the OTLP/HTTP collector spans are sent to
   * (as JSON, to `<it>/v1/traces`); none: no tracing at all (see `TracingLive`).
   */
  readonly otelEndpoint: Option.Option<string>
  /** `OTEL_SERVICE_NAME`: the `service.name` of the exported spans. */
  readonly otelServiceName: string
  /** `OTEL_BSP_SCHEDULE_DELAY` (OpenTelemetry's name): how often finished spans are sent, in one batch. */
  readonly otelExportInterval: Duration.Duration
}

const positiveMillis = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.validate({ message: "must be a positive number of milliseconds", validation: (n) => n > 0 }),
    Config.withDefault(fallback),
    Config.map(Duration.millis)
  )

/** `scheme://host[:port]` and nothing else: what a browser sends as `Origin`. */
const isOrigin = (text: string) => {
  try {
    const url = new URL(text)
    return (
      (url.protocol === "http:" || url.protocol === "https:") && url.origin === text.replace(/\/$/, "").toLowerCase()
    )
  } catch {
    return false
  }
}

/** The entries of a comma-separated list, trimmed, without empty ones. */
const originsOf = (list: string) =>
  list
    .split(",")
    .map((origin) => origin.trim())
    .filter((origin) => origin.length > 0)

/** A URL whose scheme is one of `schemes` (with the colon: `postgres:`); the host may be empty (a socket). */
const isUrlOf = (schemes: ReadonlyArray<string>) => (text: string) => {
  try {
    return schemes.includes(new URL(text).protocol)
  } catch {
    return false
  }
}

/** A secret URL, when set: checked for its scheme, never printed (the message names only the form it must have). */
const optionalUrl = (name: string, schemes: ReadonlyArray<string>, example: string) =>
  Config.option(
    Config.string(name).pipe(
      Config.validate({
        message: `must be a ${schemes.map((scheme) => `${scheme}//`).join(" or ")} URL, e.g. ${example}`,
        validation: isUrlOf(schemes)
      }),
      // Redacted after the check: `Config.redacted` would hide the check's message too.
      Config.map(Redacted.make)
    )
  )

/** `LOG_LEVEL`: read by src/main.ts with the rest, before the logger is set up. */
export const logLevelConfig = Config.logLevel("LOG_LEVEL").pipe(Config.withDefault(LogLevel.Info))

/** Every variable of `AppConfigShape`; a failure names each wrong one (see `configErrorLines`). */
export const appConfig: Config.Config<AppConfigShape> = Config.all({
  databaseUrl: optionalUrl("DATABASE_URL", ["postgres:", "postgresql:"], "postgres://user:pass@host:5432/db"),
  databasePoolSize: Config.integer("DATABASE_POOL_SIZE").pipe(
    Config.validate({ message: "must be between 1 and 100", validation: (n) => n >= 1 && n <= 100 }),
    Config.withDefault(10)
  ),
  databaseReadPoolSize: Config.integer("DATABASE_READ_POOL_SIZE").pipe(
    Config.validate({ message: "must be between 1 and 100", validation: (n) => n >= 1 && n <= 100 }),
    Config.withDefault(5)
  ),
  databaseLockTimeout: positiveMillis("DATABASE_LOCK_TIMEOUT_MS", 2_000),
  databaseStatementTimeout: positiveMillis("DATABASE_STATEMENT_TIMEOUT_MS", 10_000),
  databaseAcquireTimeout: positiveMillis("DATABASE_ACQUIRE_TIMEOUT_MS", 5_000),
  databaseApplicationName: Config.string("DATABASE_APPLICATION_NAME").pipe(
    Config.validate({
      message: "must be 1-50 printable ASCII characters",
      validation: (s) => /^[\x20-\x7e]{1,50}$/.test(s)
    }),
    Config.withDefault("audit-broadcast-service")
  ),
  redisUrl: optionalUrl("REDIS_URL", ["redis:", "rediss:"], "redis://127.0.0.1:6379"),
  host: Config.string("HOST").pipe(Config.withDefault("127.0.0.1")),
  port: Config.port("PORT").pipe(Config.withDefault(3000)),
  dataDir: Config.string("DATA_DIR").pipe(Config.withDefault(".data/pglite")),
  sessionTtl: Config.duration("SESSION_TTL").pipe(Config.withDefault(Duration.days(7))),
  authCacheTtl: Config.integer("AUTH_CACHE_TTL_MS").pipe(
    Config.validate({
      message: "must be between 0 (no caches) and 3600000 (an hour)",
      validation: (n) => n >= 0 && n <= 3_600_000
    }),
    Config.withDefault(60_000),
    Config.map(Duration.millis)
  ),
  authCacheCapacity: Config.integer("AUTH_CACHE_CAPACITY").pipe(
    Config.validate({ message: "must be between 1 and 10000000", validation: (n) => n >= 1 && n <= 10_000_000 }),
    Config.withDefault(10_000)
  ),
  cookieSecure: Config.literal("auto", "always", "never")("COOKIE_SECURE").pipe(Config.withDefault("auto" as const)),
  presenceHeartbeat: positiveMillis("PRESENCE_HEARTBEAT_MS", 10_000),
  broadcastKeepAlive: positiveMillis("BROADCAST_KEEPALIVE_MS", 15_000),
  engineToken: Config.option(
    Config.string("ENGINE_TOKEN").pipe(
      Config.validate({ message: "must be at least 32 characters", validation: (token) => token.length >= 32 }),
      Config.map(Redacted.make)
    )
  ),
  queuePrefix: Config.string("QUEUE_PREFIX").pipe(
    Config.validate({
      message: "must be 1-40 letters, digits, '-' or '_'",
      validation: (s) => /^[A-Za-z0-9_-]{1,40}$/.test(s)
    }),
    Config.withDefault("main")
  ),
  queuePollInterval: positiveMillis("QUEUE_POLL_MS", 500),
  jobMaxAttempts: Config.integer("JOB_MAX_ATTEMPTS").pipe(
    Config.validate({ message: "must be between 1 and 100", validation: (n) => n >= 1 && n <= 100 }),
    Config.withDefault(5)
  ),
  jobRetryBase: positiveMillis("JOB_RETRY_BASE_MS", 1_000),
  idempotencyKeyTtl: Config.duration("IDEMPOTENCY_KEY_TTL").pipe(
    Config.validate({
      message: "must be between 1 minute and 30 days",
      validation: (d) => Duration.between(d, { minimum: Duration.minutes(1), maximum: Duration.days(30) })
    }),
    Config.withDefault(Duration.hours(24))
  ),
  maxBodyBytes: Config.integer("MAX_BODY_BYTES").pipe(
    Config.validate({
      message: "must be between 1024 and 104857600",
      validation: (n) => n >= 1024 && n <= 100 * 1024 * 1024
    }),
    Config.withDefault(1024 * 1024)
  ),
  maxRecordBytes: Config.integer("MAX_RECORD_BYTES").pipe(
    Config.validate({
      message: "must be between 1024 and 104857600",
      validation: (n) => n >= 1024 && n <= 100 * 1024 * 1024
    }),
    Config.withDefault(256 * 1024)
  ),
  allowedOrigins: Config.string("ALLOWED_ORIGINS").pipe(
    // Checked on the text as read, so that the message names the variable.
    Config.validate({
      message: "must be a comma-separated list of origins, e.g. https://app.example.com",
      validation: (list) => originsOf(list).every(isOrigin)
    }),
    Config.withDefault(""),
    Config.map((list) => originsOf(list).map((origin) => new URL(origin).origin))
  ),
  requestTimeout: positiveMillis("REQUEST_TIMEOUT_MS", 30_000),
  hstsMaxAge: Config.option(
    Config.integer("HSTS_MAX_AGE").pipe(
      Config.validate({ message: "must be a number of seconds, 0 or more", validation: (n) => n >= 0 })
    )
  ),
  maxStreamsPerSession: Config.integer("MAX_STREAMS_PER_SESSION").pipe(
    Config.validate({ message: "must be between 1 and 1000000", validation: (n) => n >= 1 && n <= 1_000_000 }),
    Config.withDefault(16)
  ),
  streamRetry: Config.all({
    min: positiveMillis("STREAM_RETRY_MIN_MS", 1_000),
    max: positiveMillis("STREAM_RETRY_MAX_MS", 5_000)
  }).pipe(
    Config.validate({
      message: "STREAM_RETRY_MIN_MS must not be above STREAM_RETRY_MAX_MS",
      validation: ({ max, min }) => Duration.lessThanOrEqualTo(min, max)
    })
  ),
  streamMaxLifetime: positiveMillis("STREAM_MAX_LIFETIME_MS", 15 * 60_000).pipe(
    // A Node timer holds at most 2^31-1 ms; a day is far below it and far above any sensible lifetime.
    Config.validate({
      message: "must be at most 86400000 (a day)",
      validation: (lifetime) => Duration.lessThanOrEqualTo(lifetime, Duration.days(1))
    })
  ),
  loginMaxFailures: Config.integer("LOGIN_MAX_FAILURES").pipe(
    Config.validate({ message: "must be between 1 and 1000", validation: (n) => n >= 1 && n <= 1000 }),
    Config.withDefault(5)
  ),
  loginWindow: positiveMillis("LOGIN_WINDOW_MS", 15 * 60_000),
  loginMaxPerAddress: Config.integer("LOGIN_MAX_PER_ADDRESS").pipe(
    Config.validate({ message: "must be between 1 and 1000000", validation: (n) => n >= 1 && n <= 1_000_000 }),
    Config.withDefault(20)
  ),
  trustProxy: Config.boolean("TRUST_PROXY").pipe(Config.withDefault(false)),
  drainTimeout: positiveMillis("DRAIN_TIMEOUT_MS", 10_000),
  pruneInterval: positiveMillis("PRUNE_INTERVAL_MS", 3_600_000),
  completedRunRetention: Config.duration("COMPLETED_RUN_RETENTION").pipe(
    Config.validate({
      message: "must be at least 1 hour",
      validation: (retention) => Duration.greaterThanOrEqualTo(retention, Duration.hours(1))
    }),
    Config.withDefault(Duration.days(7))
  ),
  redisPrefix: Config.option(
    Config.string("REDIS_PREFIX").pipe(
      Config.validate({
        message: "must be 1-100 visible ASCII characters without braces, e.g. abs:production:",
        validation: (s) => /^[\x21-\x7a\x7c\x7e]{1,100}$/.test(s)
      })
    )
  ),
  metricsToken: Config.option(Config.redacted("METRICS_TOKEN")).pipe(
    Config.validate({
      message: "must be at least 16 characters",
      validation: (token) => Option.isNone(token) || Redacted.value(token.value).length >= 16
    })
  ),
  otelEndpoint: Config.option(
    Config.string("OTEL_EXPORTER_OTLP_ENDPOINT").pipe(
      Config.validate({
        message: "must be an http:// or https:// URL, e.g. http://127.0.0.1:4318",
        validation: isUrlOf(["http:", "https:"])
      }),
      Config.map((url) => url.replace(/\/+$/, ""))
    )
  ),
  otelServiceName: Config.string("OTEL_SERVICE_NAME").pipe(
    Config.validate({ message: "must not be empty", validation: (name) => name.trim().length > 0 }),
    Config.withDefault("audit-broadcast-service")
  ),
  otelExportInterval: positiveMillis("OTEL_BSP_SCHEDULE_DELAY", 5_000)
})

/** The database's name, as a key segment: characters Redis tools would trip on become `_`. */
const databaseNameOf = (url: Redacted.Redacted): string => {
  try {
    const name = decodeURIComponent(new URL(Redacted.value(url)).pathname.slice(1))
    return name.length === 0 ? "postgres" : name.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 60)
  } catch {
    return "postgres"
  }
}

/**
 * This deployment's Redis prefix: `REDIS_PREFIX`, else `abs:<database name>:`
 * (`abs:embedded:` on the embedded database). Two deployments on one Redis
 * are kept apart by default when their databases are named differently.
 */
export const redisPrefixOf = (config: Pick<AppConfigShape, "redisPrefix" | "databaseUrl">): string =>
  Option.getOrElse(config.redisPrefix, () =>
    Option.match(config.databaseUrl, {
      onNone: () => "abs:embedded:",
      onSome: (url) => `abs:${databaseNameOf(url)}:`
    })
  )

/** How log lines are written: one JSON object a line, Effect's readable console format, or logfmt. */
export type LogFormat = "json" | "pretty" | "logfmt"

/**
 * `LOG_FORMAT`; read on its own by src/main.ts, which sets up logging before
 * the app. Unset: JSON in production (`NODE_ENV=production`) and whenever the
 * output is not a terminal (a collector, a pipe, a test reading the lines),
 * readable on a developer's terminal.
 */
export const logFormatConfig: Config.Config<LogFormat> = Config.all({
  chosen: Config.option(Config.literal("json", "pretty", "logfmt")("LOG_FORMAT")),
  production: Config.string("NODE_ENV").pipe(
    Config.withDefault(""),
    Config.map((env) => env === "production")
  )
}).pipe(
  Config.map(({ chosen, production }) =>
    Option.getOrElse(chosen, (): LogFormat => (!production && process.stdout.isTTY === true ? "pretty" : "json"))
  )
)

/** The service's whole configuration, read once from the environment. */
export class AppConfig extends Context.Tag("AppConfig")<AppConfig, AppConfigShape>() {
  static readonly layer = Layer.effect(AppConfig, appConfig)
  static readonly make = (overrides: Partial<AppConfigShape> = {}) =>
    Layer.effect(
      AppConfig,
      Effect.map(appConfig, (c) => ({ ...c, ...overrides }))
    )
}
