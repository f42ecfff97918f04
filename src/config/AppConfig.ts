import {
  Array as Arr,
  Config,
  ConfigProvider,
  Context,
  Duration,
  Effect,
  Formatter,
  Layer,
  type LogLevel,
  Option,
  Redacted,
  Schema,
  SchemaIssue
} from "effect"
import type { KeyObject } from "node:crypto"
import { ed25519PrivateKeyOf, ed25519PublicKeyOf, isPublicKeyOf } from "./ed25519Keys"

/** One `host:port` of `REDIS_CLUSTER_NODES`. */
export interface RedisNode {
  readonly host: string
  readonly port: number
}

/** `FEED_POSITIONS`, as set. */
export type FeedPositionsSetting = "auto" | "lock" | "wal"

/** How the session cookie's Secure flag is chosen. `auto`: when the request came over HTTPS. */
export type CookieSecure = "auto" | "always" | "never"

export interface AppConfigShape {
  /** PostgreSQL URL; none means the embedded PGlite database. */
  readonly databaseUrl: Option.Option<Redacted.Redacted>
  /**
   * `DATABASE_READ_URL`: a streaming replica of `databaseUrl` that serves timelines, lists, the feed and
   * history (docs/scale-out.md, "Read replicas"); none: every read on the primary. Never without `databaseUrl`.
   */
  readonly databaseReadUrl: Option.Option<Redacted.Redacted>
  /** Pool size for a real PostgreSQL: the write pool (units of work, sign-in, migrations). */
  readonly databasePoolSize: number
  /** Pool size of the read pool (record and timeline reads, credential checks), and of the replica's pool. */
  readonly databaseReadPoolSize: number
  /** How long a statement waits for a lock (row, table) before it fails: bounds a write stuck behind another. */
  readonly databaseLockTimeout: Duration.Duration
  /** How long one statement may run before PostgreSQL cancels it. */
  readonly databaseStatementTimeout: Duration.Duration
  /** How long a request waits for a connection (a free pool slot, or a new connection). */
  readonly databaseAcquireTimeout: Duration.Duration
  /** Names this instance's connections in `pg_stat_activity` (suffixed `/write`, `/read`, `/health`). */
  readonly databaseApplicationName: string
  /**
   * `FEED_POSITIONS`: how feed positions are taken (docs/feed.md, "Order"). `lock`: in the unit's INSERT,
   * under the workspace's counter lock; `wal`: after COMMIT, from a logical replication slot; `auto`: `wal`
   * where PostgreSQL offers logical decoding, else `lock`.
   */
  readonly feedPositions: FeedPositionsSetting
  /** `FEED_SLOT`: the logical replication slot (and the publication `<slot>_messages`) WAL mode reads. */
  readonly feedSlot: string
  /** Redis URL; none (and no cluster) means the in-process broadcast bus and presence store (single instance only). */
  readonly redisUrl: Option.Option<Redacted.Redacted>
  /** `REDIS_CLUSTER_NODES`: some nodes of a Redis Cluster, which then takes every Redis use (never with `redisUrl`). */
  readonly redisClusterNodes: Option.Option<ReadonlyArray<RedisNode>>
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
  /**
   * `LEDGER_SIGNING_KEY`: the Ed25519 key ledger digests are signed with
   * (docs/ledger.md, "Taking and keeping digests"); none: on the embedded
   * database, a key kept in the data directory (made on first use), else none at all.
   */
  readonly ledgerSigningKey: Option.Option<Redacted.Redacted<KeyObject>>
  /** `LEDGER_PUBLIC_KEY`: the key digests are verified against; none: the signing key's. */
  readonly ledgerPublicKey: Option.Option<KeyObject>
  /** `LEDGER_DIGEST_DIR`: where a digest of each workspace whose ledger moved is appended every interval; none: no such job. */
  readonly ledgerDigestDir: Option.Option<string>
  /** `LEDGER_DIGEST_INTERVAL`: how often that job runs, once per deployment. */
  readonly ledgerDigestInterval: Duration.Duration
}

/** A wrong value of the variable `name` (none: a check over several variables, whose message names them). */
const invalid = (name: string | undefined, message: string) => {
  const issue = new SchemaIssue.InvalidValue({ message })
  return new Config.ConfigError(
    new Schema.SchemaError(name === undefined ? issue : new SchemaIssue.Pointer([name], issue))
  )
}

/**
 * The variable `name`, decoded by `decode`. A value it rejects fails with
 * Effect 3's wording, which operators and the README know:
 * `Expected a network port value but received "abc"`.
 */
const decoded = <A>(name: string, expected: string, decode: (text: string) => Option.Option<A>): Config.Config<A> =>
  Config.String(name).pipe(
    Config.mapEffect((text) =>
      Option.match(decode(text), {
        onNone: () => Effect.fail(invalid(name, `Expected ${expected} but received ${Formatter.format(text)}`)),
        onSome: Effect.succeed
      })
    )
  )

/** Fails with `message`, naming `name`, unless the value passes `valid`. */
const checked =
  <A>(name: string | undefined, message: string, valid: (value: A) => boolean) =>
  (self: Config.Config<A>): Config.Config<A> =>
    Config.mapEffect(self, (value) => (valid(value) ? Effect.succeed(value) : Effect.fail(invalid(name, message))))

const integerOf = (text: string) => {
  const n = Number(text)
  return Number.isInteger(n) ? Option.some(n) : Option.none()
}

const integer = (name: string) => decoded(name, "an integer value", integerOf)

const port = (name: string) =>
  decoded(name, "a network port value", (text) =>
    Option.filter(integerOf(text), (n) => `${n}` === text && n >= 1 && n <= 65535)
  )

const duration = (name: string) => decoded(name, "a duration", Schema.decodeUnknownOption(Schema.DurationFromString))

const booleanOf: Record<string, boolean> = {
  true: true,
  yes: true,
  on: true,
  "1": true,
  false: false,
  no: false,
  off: false,
  "0": false
}

const boolean = (name: string) =>
  decoded(name, "a boolean value", (text) => Option.fromUndefinedOr(booleanOf[text.toLowerCase()]))

const literal =
  <const L extends ReadonlyArray<string>>(...literals: L) =>
  (name: string) =>
    decoded(name, `one of (${literals.join(", ")})`, (text) =>
      Option.fromUndefinedOr(literals.find((literal): literal is L[number] => literal === text))
    )

/** Effect 3's level names (`info`, `DEBUG`, ..., `off`), in any case, as the README documents them. */
const logLevelNames: Record<string, LogLevel.LogLevel> = {
  ALL: "All",
  FATAL: "Fatal",
  ERROR: "Error",
  WARN: "Warn",
  INFO: "Info",
  DEBUG: "Debug",
  TRACE: "Trace",
  OFF: "None"
}

const positiveMillis = (name: string, fallback: number) =>
  integer(name).pipe(
    checked(name, "must be a positive number of milliseconds", (n) => n > 0),
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
    Config.String(name).pipe(
      checked(
        name,
        `must be a ${schemes.map((scheme) => `${scheme}//`).join(" or ")} URL, e.g. ${example}`,
        isUrlOf(schemes)
      ),
      // Redacted after the check: `Config.Redacted` would hide the check's message too.
      Config.map(Redacted.make)
    )
  )

/** `host:port` (a bracketed IPv6 address as host: `[::1]:7000`); none when malformed. */
const redisNodeOf = (entry: string): Option.Option<RedisNode> => {
  const match = /^(\[[0-9A-Fa-f:.]+\]|[^\s:,[\]]+):(\d{1,5})$/.exec(entry)
  const host = match?.[1]
  const port = Number(match?.[2])
  return host !== undefined && port >= 1 && port <= 65535
    ? Option.some({ host: host.replace(/^\[(.*)\]$/, "$1"), port })
    : Option.none()
}

/** The cluster's nodes, when set; never together with `REDIS_URL` (which of the two would win is not obvious). */
const redisClusterNodes = Config.all({
  nodes: Config.option(
    decoded("REDIS_CLUSTER_NODES", "a comma-separated list of host:port, e.g. 10.0.0.1:7000,10.0.0.2:7000", (text) => {
      const nodes = Option.all(originsOf(text).map(redisNodeOf))
      return Option.filter(nodes, (list) => list.length > 0)
    })
  ),
  url: Config.option(Config.String("REDIS_URL"))
}).pipe(
  checked(
    undefined,
    "REDIS_URL and REDIS_CLUSTER_NODES are both set: set REDIS_URL for one Redis server, or REDIS_CLUSTER_NODES for a Redis Cluster, not both",
    ({ nodes, url }) => Option.isNone(nodes) || Option.isNone(url)
  ),
  Config.map(({ nodes }) => nodes)
)

/** The replica, when set; only beside `DATABASE_URL` (the embedded database has no replica). */
const databaseReadUrl = Config.all({
  read: optionalUrl("DATABASE_READ_URL", ["postgres:", "postgresql:"], "postgres://user:pass@replica:5432/db"),
  primary: Config.option(Config.String("DATABASE_URL"))
}).pipe(
  checked(
    undefined,
    "DATABASE_READ_URL is set without DATABASE_URL: the embedded database (PGlite) has no replica; set DATABASE_URL to the primary, or unset DATABASE_READ_URL",
    ({ primary, read }) => Option.isNone(read) || Option.isSome(primary)
  ),
  Config.map(({ read }) => read)
)

/** `LOG_LEVEL`: read by src/main.ts with the rest, before the logger is set up. */
export const logLevelConfig: Config.Config<LogLevel.LogLevel> = decoded("LOG_LEVEL", "a log level", (text) =>
  Option.fromUndefinedOr(logLevelNames[text.toUpperCase()])
).pipe(Config.withDefault("Info"))

const between = (name: string, minimum: number, maximum: number, message: string, fallback: number) =>
  integer(name).pipe(
    checked(name, message, (n) => n >= minimum && n <= maximum),
    Config.withDefault(fallback)
  )

/** An optional key (a secret's value never printed: the message names only the form it must have). */
const optionalKey = (name: string, message: string, parse: (text: string) => Option.Option<KeyObject>) =>
  Config.option(
    Config.String(name).pipe(
      Config.mapEffect((text) =>
        Option.match(parse(text), { onNone: () => Effect.fail(invalid(name, message)), onSome: Effect.succeed })
      )
    )
  )

const ledgerSigningKey = optionalKey(
  "LEDGER_SIGNING_KEY",
  "must be an Ed25519 private key: PKCS#8 PEM, or its DER in base64 (openssl genpkey -algorithm ed25519)",
  ed25519PrivateKeyOf
)

/** Every variable of `AppConfigShape`, each read on its own (see `appConfig`). */
const variables = {
  databaseUrl: optionalUrl("DATABASE_URL", ["postgres:", "postgresql:"], "postgres://user:pass@host:5432/db"),
  databaseReadUrl,
  databasePoolSize: between("DATABASE_POOL_SIZE", 1, 100, "must be between 1 and 100", 10),
  databaseReadPoolSize: between("DATABASE_READ_POOL_SIZE", 1, 100, "must be between 1 and 100", 5),
  databaseLockTimeout: positiveMillis("DATABASE_LOCK_TIMEOUT_MS", 2_000),
  feedPositions: literal("auto", "lock", "wal")("FEED_POSITIONS").pipe(Config.withDefault("auto")),
  feedSlot: Config.String("FEED_SLOT").pipe(
    checked("FEED_SLOT", "must be a replication slot name: 1-50 lower-case letters, digits or underscores", (name) =>
      /^[a-z0-9_]{1,50}$/u.test(name)
    ),
    Config.withDefault("audit_feed")
  ),
  databaseStatementTimeout: positiveMillis("DATABASE_STATEMENT_TIMEOUT_MS", 10_000),
  databaseAcquireTimeout: positiveMillis("DATABASE_ACQUIRE_TIMEOUT_MS", 5_000),
  databaseApplicationName: Config.String("DATABASE_APPLICATION_NAME").pipe(
    checked("DATABASE_APPLICATION_NAME", "must be 1-50 printable ASCII characters", (s) =>
      /^[\x20-\x7e]{1,50}$/.test(s)
    ),
    Config.withDefault("audit-broadcast-service")
  ),
  redisUrl: optionalUrl("REDIS_URL", ["redis:", "rediss:"], "redis://127.0.0.1:6379"),
  redisClusterNodes,
  host: Config.String("HOST").pipe(Config.withDefault("127.0.0.1")),
  port: port("PORT").pipe(Config.withDefault(3000)),
  dataDir: Config.String("DATA_DIR").pipe(Config.withDefault(".data/pglite")),
  sessionTtl: duration("SESSION_TTL").pipe(Config.withDefault(Duration.days(7))),
  authCacheTtl: between(
    "AUTH_CACHE_TTL_MS",
    0,
    3_600_000,
    "must be between 0 (no caches) and 3600000 (an hour)",
    60_000
  ).pipe(Config.map(Duration.millis)),
  authCacheCapacity: between("AUTH_CACHE_CAPACITY", 1, 10_000_000, "must be between 1 and 10000000", 10_000),
  cookieSecure: literal("auto", "always", "never")("COOKIE_SECURE").pipe(Config.withDefault("auto")),
  presenceHeartbeat: positiveMillis("PRESENCE_HEARTBEAT_MS", 10_000),
  broadcastKeepAlive: positiveMillis("BROADCAST_KEEPALIVE_MS", 15_000),
  engineToken: Config.option(
    Config.String("ENGINE_TOKEN").pipe(
      checked("ENGINE_TOKEN", "must be at least 32 characters", (token) => token.length >= 32),
      Config.map(Redacted.make)
    )
  ),
  queuePrefix: Config.String("QUEUE_PREFIX").pipe(
    checked("QUEUE_PREFIX", "must be 1-40 letters, digits, '-' or '_'", (s) => /^[A-Za-z0-9_-]{1,40}$/.test(s)),
    Config.withDefault("main")
  ),
  queuePollInterval: positiveMillis("QUEUE_POLL_MS", 500),
  jobMaxAttempts: between("JOB_MAX_ATTEMPTS", 1, 100, "must be between 1 and 100", 5),
  jobRetryBase: positiveMillis("JOB_RETRY_BASE_MS", 1_000),
  idempotencyKeyTtl: duration("IDEMPOTENCY_KEY_TTL").pipe(
    checked("IDEMPOTENCY_KEY_TTL", "must be between 1 minute and 30 days", (d) =>
      Duration.between(d, { minimum: Duration.minutes(1), maximum: Duration.days(30) })
    ),
    Config.withDefault(Duration.hours(24))
  ),
  maxBodyBytes: between("MAX_BODY_BYTES", 1024, 100 * 1024 * 1024, "must be between 1024 and 104857600", 1024 * 1024),
  maxRecordBytes: between(
    "MAX_RECORD_BYTES",
    1024,
    100 * 1024 * 1024,
    "must be between 1024 and 104857600",
    256 * 1024
  ),
  allowedOrigins: Config.String("ALLOWED_ORIGINS").pipe(
    // Checked on the text as read, so that the message names the variable.
    checked("ALLOWED_ORIGINS", "must be a comma-separated list of origins, e.g. https://app.example.com", (list) =>
      originsOf(list).every(isOrigin)
    ),
    Config.withDefault(""),
    Config.map((list) => originsOf(list).map((origin) => new URL(origin).origin))
  ),
  requestTimeout: positiveMillis("REQUEST_TIMEOUT_MS", 30_000),
  hstsMaxAge: Config.option(
    integer("HSTS_MAX_AGE").pipe(checked("HSTS_MAX_AGE", "must be a number of seconds, 0 or more", (n) => n >= 0))
  ),
  maxStreamsPerSession: between("MAX_STREAMS_PER_SESSION", 1, 1_000_000, "must be between 1 and 1000000", 16),
  streamRetry: Config.all({
    min: positiveMillis("STREAM_RETRY_MIN_MS", 1_000),
    max: positiveMillis("STREAM_RETRY_MAX_MS", 5_000)
  }).pipe(
    checked(undefined, "STREAM_RETRY_MIN_MS must not be above STREAM_RETRY_MAX_MS", ({ max, min }) =>
      Duration.isLessThanOrEqualTo(min, max)
    )
  ),
  streamMaxLifetime: positiveMillis("STREAM_MAX_LIFETIME_MS", 15 * 60_000).pipe(
    // A Node timer holds at most 2^31-1 ms; a day is far below it and far above any sensible lifetime.
    checked("STREAM_MAX_LIFETIME_MS", "must be at most 86400000 (a day)", (lifetime) =>
      Duration.isLessThanOrEqualTo(lifetime, Duration.days(1))
    )
  ),
  loginMaxFailures: between("LOGIN_MAX_FAILURES", 1, 1000, "must be between 1 and 1000", 5),
  loginWindow: positiveMillis("LOGIN_WINDOW_MS", 15 * 60_000),
  loginMaxPerAddress: between("LOGIN_MAX_PER_ADDRESS", 1, 1_000_000, "must be between 1 and 1000000", 20),
  trustProxy: boolean("TRUST_PROXY").pipe(Config.withDefault(false)),
  drainTimeout: positiveMillis("DRAIN_TIMEOUT_MS", 10_000),
  pruneInterval: positiveMillis("PRUNE_INTERVAL_MS", 3_600_000),
  completedRunRetention: duration("COMPLETED_RUN_RETENTION").pipe(
    checked("COMPLETED_RUN_RETENTION", "must be at least 1 hour", (retention) =>
      Duration.isGreaterThanOrEqualTo(retention, Duration.hours(1))
    ),
    Config.withDefault(Duration.days(7))
  ),
  redisPrefix: Config.option(
    Config.String("REDIS_PREFIX").pipe(
      checked("REDIS_PREFIX", "must be 1-100 visible ASCII characters without braces, e.g. abs:production:", (s) =>
        /^[\x21-\x7a\x7c\x7e]{1,100}$/.test(s)
      )
    )
  ),
  metricsToken: Config.option(
    Config.String("METRICS_TOKEN").pipe(
      // Without the variable's name, as Effect 3 printed it.
      checked(undefined, "must be at least 16 characters", (token) => token.length >= 16),
      Config.map(Redacted.make)
    )
  ),
  otelEndpoint: Config.option(
    Config.String("OTEL_EXPORTER_OTLP_ENDPOINT").pipe(
      checked(
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "must be an http:// or https:// URL, e.g. http://127.0.0.1:4318",
        isUrlOf(["http:", "https:"])
      ),
      Config.map((url) => url.replace(/\/+$/, ""))
    )
  ),
  otelServiceName: Config.String("OTEL_SERVICE_NAME").pipe(
    checked("OTEL_SERVICE_NAME", "must not be empty", (name) => name.trim().length > 0),
    Config.withDefault("audit-broadcast-service")
  ),
  otelExportInterval: positiveMillis("OTEL_BSP_SCHEDULE_DELAY", 5_000),
  ledgerSigningKey: ledgerSigningKey.pipe(Config.map(Option.map(Redacted.make))),
  // The public key read first: a wrong signing key, reported on its own above, must not hide a wrong public key.
  ledgerPublicKey: Config.all({
    verifying: optionalKey(
      "LEDGER_PUBLIC_KEY",
      "must be an Ed25519 public key: SPKI PEM, or its DER in base64",
      ed25519PublicKeyOf
    ),
    signing: ledgerSigningKey
  }).pipe(
    checked(
      undefined,
      "LEDGER_PUBLIC_KEY is not the public key of LEDGER_SIGNING_KEY",
      ({ signing, verifying }) =>
        Option.isNone(signing) || Option.isNone(verifying) || isPublicKeyOf(verifying.value, signing.value)
    ),
    Config.map(({ verifying }) => verifying)
  ),
  ledgerDigestDir: Config.option(
    Config.String("LEDGER_DIGEST_DIR").pipe(
      checked("LEDGER_DIGEST_DIR", "must not be empty", (dir) => dir.trim().length > 0)
    )
  ),
  ledgerDigestInterval: duration("LEDGER_DIGEST_INTERVAL").pipe(
    checked("LEDGER_DIGEST_INTERVAL", "must be between 1 minute and 7 days", (d) =>
      Duration.between(d, { minimum: Duration.minutes(1), maximum: Duration.days(7) })
    ),
    Config.withDefault(Duration.hours(1))
  )
}

/**
 * One error holding every issue of `errors` (a `Composite`), so that it
 * passes through `Config.orElse` and nested `reportingEvery` whole. A source
 * error (the provider could not be read) is reported alone.
 */
const together = (errors: Arr.NonEmptyReadonlyArray<Config.ConfigError>): Config.ConfigError => {
  const issues = errors.flatMap((error) => (error.cause._tag === "SchemaError" ? [error.cause.issue] : []))
  if (issues.length < errors.length) return errors.find((error) => error.cause._tag !== "SchemaError") ?? errors[0]
  return Arr.isReadonlyArrayNonEmpty(issues) && issues.length > 1
    ? new Config.ConfigError(new Schema.SchemaError(new SchemaIssue.Composite(Schema.Unknown.ast, issues)))
    : errors[0]
}

/**
 * Fails with every failure of `configs`, in order, when `self` fails: `Config.all` stops
 * at the first, and an operator should fix every wrong variable in one go.
 */
export const reportingEvery =
  (configs: Iterable<Config.Config<unknown>>) =>
  <A>(self: Config.Config<A>): Config.Config<A> =>
    Config.orElse(self, (first) =>
      Config.all(
        Arr.map(Arr.fromIterable(configs), (config) =>
          config.pipe(
            Config.map(() => Option.none<Config.ConfigError>()),
            Config.orElse((error) => Config.succeed(Option.some(error)))
          )
        )
      ).pipe(
        Config.mapEffect((failures) => {
          const errors = Arr.getSomes(failures)
          return Effect.fail(Arr.isReadonlyArrayNonEmpty(errors) ? together(errors) : first)
        })
      )
    )

/** Every variable of `AppConfigShape`; a failure names each wrong one (see `configErrorLines`). */
export const appConfig: Config.Config<AppConfigShape> = Config.all(variables).pipe(
  reportingEvery(Object.values(variables))
)

/**
 * The environment as the service reads it: a variable set to the empty string
 * is set, and checked (`PORT=` is an error, as it always was), where Effect 4's
 * default provider would take it for unset. The entry points provide it.
 */
export const environment = () => ConfigProvider.fromEnv({ preserveEmptyStrings: true })

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
  chosen: Config.option(literal("json", "pretty", "logfmt")("LOG_FORMAT")),
  production: Config.String("NODE_ENV").pipe(
    Config.withDefault(""),
    Config.map((env) => env === "production")
  )
}).pipe(
  Config.map(({ chosen, production }) =>
    Option.getOrElse(chosen, (): LogFormat => (!production && process.stdout.isTTY === true ? "pretty" : "json"))
  )
)

/** The service's whole configuration, read once from the environment. */
export class AppConfig extends Context.Service<AppConfig, AppConfigShape>()("AppConfig") {
  static readonly layer = Layer.effect(AppConfig, appConfig)
  static readonly make = (overrides: Partial<AppConfigShape> = {}) =>
    Layer.effect(
      AppConfig,
      Effect.map(appConfig, (c) => ({ ...c, ...overrides }))
    )
}
