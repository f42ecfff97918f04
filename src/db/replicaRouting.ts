import type { Connection } from "effect/sql/SqlConnection"
import type { SqlError } from "effect/sql/SqlError"
import { Effect, Metric, type Scope } from "effect"
import { replicaReads } from "../metrics/ServiceMetrics"
import { classifySqlError } from "./DatabaseFault"
import { ReadPlacement } from "./ReadPlacement"
import type { ReplicaTracker } from "./ReplicaTracker"

type Acquirer = Effect.Effect<Connection, SqlError, Scope.Scope>

/** Why a routed read went where it went (`database_replica_reads_total`'s `route`). */
type Route = "replica" | "replayed" | "behind" | "unusable" | "primary" | "fault"

const counters = {
  replica: Metric.withAttributes(replicaReads, { target: "replica", route: "replica" }),
  replayed: Metric.withAttributes(replicaReads, { target: "replica", route: "replayed" }),
  behind: Metric.withAttributes(replicaReads, { target: "primary", route: "behind" }),
  unusable: Metric.withAttributes(replicaReads, { target: "primary", route: "unusable" }),
  primary: Metric.withAttributes(replicaReads, { target: "primary", route: "primary" }),
  fault: Metric.withAttributes(replicaReads, { target: "primary", route: "fault" })
} satisfies Record<Route, unknown>

const counted = (route: Route) => Metric.update(counters[route], 1)

/** The replica itself is gone (not merely its pool drained, which says nothing of the replica). */
const isLost = (error: SqlError) => {
  const fault = classifySqlError(error)
  return fault.kind === "connection" && fault.retryable
}

/**
 * A fault the primary does not share: the replica is gone (a connection
 * fault), or it cancelled the statement because replay needed what it read
 * (a recovery conflict, SQLSTATE 40001). The read runs again on the primary.
 */
const isReplicaFault = (error: SqlError) => {
  const kind = classifySqlError(error).kind
  return kind === "connection" || kind === "serialization"
}

/**
 * A replica connection whose statements, when the replica fails them with a
 * replica fault, run again on a primary connection: a read never fails
 * because the replica did. The replica is marked down (a connection fault),
 * so the reads after it go to the primary until its check finds it again.
 * A stream (`executeStream`: the feed's export) is not re-run: part of it may
 * have been sent.
 */
const withFallback = (replica: Connection, primary: Acquirer, tracker: ReplicaTracker): Connection => {
  const onPrimary =
    <A>(run: (conn: Connection) => Effect.Effect<A, SqlError>) =>
    (error: SqlError): Effect.Effect<A, SqlError> =>
      Effect.gen(function* () {
        if (isLost(error)) yield* tracker.markDown
        yield* counted("fault")
        return yield* Effect.scoped(Effect.flatMap(primary, run))
      })
  const guarded = <A>(run: (conn: Connection) => Effect.Effect<A, SqlError>) =>
    run(replica).pipe(Effect.catchIf(isReplicaFault, onPrimary(run)))
  return {
    execute: (sql, params, transformRows) => guarded((conn) => conn.execute(sql, params, transformRows)),
    executeRaw: (sql, params) => guarded((conn) => conn.executeRaw(sql, params)),
    executeStream: replica.executeStream,
    executeValues: (sql, params) => guarded((conn) => conn.executeValues(sql, params)),
    executeValuesUnprepared: (sql, params) => guarded((conn) => conn.executeValuesUnprepared(sql, params)),
    executeUnprepared: (sql, params, transformRows) =>
      guarded((conn) => conn.executeUnprepared(sql, params, transformRows))
  }
}

/**
 * The connection for a routed read outside a transaction (inside one the
 * client uses the transaction's connection and never asks): the replica's
 * when this fiber's `ReadPlacement` allows it and the replica is up and keeps
 * up, else the primary read pool's. A read sent with a commit position waits
 * (`replayWait` at most) for the replica to replay it. A replica connection
 * that cannot be had (the replica is gone, its pool is drained) is no
 * failure either: the read takes a primary connection.
 */
export const routedAcquirer = (options: {
  readonly replica: Acquirer
  readonly primary: Acquirer
  readonly tracker: ReplicaTracker
}): Acquirer => {
  const { primary, replica, tracker } = options
  const onPrimary = (route: Route) => Effect.andThen(counted(route), primary)
  const onReplica = (route: Route) =>
    replica.pipe(
      Effect.tap(counted(route)),
      Effect.map((conn) => withFallback(conn, primary, tracker)),
      Effect.catch((error) => Effect.andThen(isLost(error) ? tracker.markDown : Effect.void, onPrimary("fault")))
    )
  return Effect.gen(function* () {
    const placement = yield* ReadPlacement
    if (placement._tag === "primary") return yield* onPrimary("primary")
    if (!tracker.usable()) return yield* onPrimary("unusable")
    if (placement._tag === "replica") return yield* onReplica("replica")
    return yield* (yield* tracker.awaitReplayed(placement.lsn)) ? onReplica("replayed") : onPrimary("behind")
  })
}
