import { Metric } from "effect"

/**
 * The service's metrics, served at `/metrics` in Prometheus text format
 * (docs/operations.md lists them). Counters count from the process's start;
 * gauges are read when they change, or (queue depth, connections) when
 * `/metrics` is asked.
 */

/** Answers by method, route (the endpoint's path template) and status. */
export const httpRequests = Metric.counter("http_requests_total", {
  description: "HTTP requests answered, by method, route and status",
  incremental: true
})

/** Seconds from the request's arrival to its answer (a broadcast stream: to its head). */
export const httpRequestDuration = Metric.histogram("http_request_duration_seconds", {
  boundaries: Metric.boundariesFromIterable([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]),
  description: "HTTP request latency in seconds, by method, route and status"
})

/** Tagged `route`: answers a fast route (src/http/FastRoutes.ts) gave itself, before the HttpApi stack (also in `httpRequests`). */
export const fastRouteAnswers = Metric.counter("http_fast_route_answers_total", {
  description:
    "HTTP answers given by a fast route before the HttpApi stack (counted in http_requests_total too), by route",
  incremental: true
})

export const broadcastStreamsOpen = Metric.gauge("broadcast_streams_open", {
  description: "Broadcast (SSE) streams open on this instance"
})

export const hintsPublished = Metric.counter("broadcast_hints_published_total", {
  description: "Hints (changed, presence) this instance published to the bus",
  incremental: true
})

export const hintsDropped = Metric.counter("broadcast_hints_dropped_total", {
  description: "Hints this instance could not publish (the bus was unreachable): lost",
  incremental: true
})

export const hintsDelivered = Metric.counter("broadcast_hints_delivered_total", {
  description: "Hints handed to open streams on this instance (one per stream)",
  incremental: true
})

export const subscriptionLosses = Metric.counter("broadcast_subscription_losses_total", {
  description: "Times the bus subscription (Redis) was lost; each is followed by a reconnect",
  incremental: true
})

export const auditRowsWritten = Metric.counter("audit_rows_written_total", {
  description: "Audit timeline rows written by committed units of work",
  incremental: true
})

/** Tagged `outcome`: `committed` or `rolled_back` (an attempt retried after a database fault counts once per attempt). */
export const unitsOfWork = Metric.counter("units_of_work_total", {
  description: "Units of work (transactions) by outcome",
  incremental: true
})

/** Tagged `kind`: `job` or `workflow run`. */
export const queueRunFailures = Metric.counter("queue_run_failures_total", {
  description: "Failed attempts of jobs and workflow runs (retried until JOB_MAX_ATTEMPTS)",
  incremental: true
})

/** Tagged `queue` (`jobs`, `workflows`) and `state` (`waiting`, `failed`); read at each scrape. */
export const queueDepth = Metric.gauge("queue_depth", {
  description: "Elements of this deployment's durable queues: waiting to run, or failed for good"
})

/** Tagged `pool` and `state` (`active`, `idle`, ...); read at each scrape from pg_stat_activity. */
export const databaseConnections = Metric.gauge("db_connections", {
  description: "PostgreSQL connections of this deployment (its DATABASE_APPLICATION_NAME), by pool and state"
})

/** Tagged `pool`. */
export const databasePoolMax = Metric.gauge("db_pool_max_connections", {
  description: "Connections each pool of this instance may open"
})

/**
 * Tagged `target` (`replica`, `primary`) and `route`: why a routed read went there (`replica`: no commit position;
 * `replayed`: the replica had replayed the caller's; `behind`: it had not within the wait; `unusable`: the replica
 * is down or lagging; `primary`: the reader asked for the primary; `fault`: the replica failed it, run on the primary).
 * Only with `DATABASE_READ_URL`.
 */
export const replicaReads = Metric.counter("db_replica_reads_total", {
  description: "Routed reads (timelines, lists, feed, history) by where they ran and why",
  incremental: true
})

/** WAL mode (docs/feed.md): the WAL the feed's replication slot keeps, from its confirmed position to the server's end. */
export const feedSlotLagBytes = Metric.gauge("feed_slot_lag_bytes", {
  description: "WAL retained by the feed's replication slot (bytes from its confirmed flush position to the WAL's end)"
})

export const feedUnpositionedRows = Metric.gauge("feed_unpositioned_rows", {
  description: "Audit rows committed and not yet given a feed position (WAL mode), all workspaces"
})

export const feedPositionDelay = Metric.histogram("feed_position_delay_seconds", {
  boundaries: Metric.boundariesFromIterable([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]),
  description: "From a unit's COMMIT to its rows' feed positions committed (WAL mode, on the positioning instance)"
})

export const feedPositionedRows = Metric.counter("feed_positioned_rows_total", {
  description: "Audit rows given their feed position by this instance's positioner (WAL mode, and rebuilds)",
  incremental: true
})
