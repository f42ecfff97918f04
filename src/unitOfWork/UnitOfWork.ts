import { SqlClient } from "effect/sql"
import { Context, Duration, Effect, Exit, Layer, Metric, Option, References } from "effect"
import { makeAuditStaging } from "./AuditStaging"
import { CommitOutcomeUnknown, databaseFaultOf } from "../db/DatabaseFault"
import type { DatabaseFault } from "../db/DatabaseFault"
import { orDieOnSqlError } from "../db/orDieOnSqlError"
import type { BusinessObjectEvent } from "../events/BusinessObjectEvent"
import { OutboundBridge } from "../outbound/OutboundBridge"
import type { Workspace } from "../api/Workspace"
import { CurrentUnit } from "./CurrentUnit"
import { ParentCorrelation } from "./ParentCorrelation"
import { CurrentActor } from "../context/Frames"
import { actorSpanAttributes } from "../context/actorSpanAttributes"
import { withSpanIfTracing } from "../context/withSpanIfTracing"
import { auditRowsWritten, unitsOfWork } from "../metrics/ServiceMetrics"
import { FeedMode } from "../feedPositions/FeedMode"

const committed = Metric.withAttributes(unitsOfWork, { outcome: "committed" })
const rolledBack = Metric.withAttributes(unitsOfWork, { outcome: "rolled_back" })

interface Retries {
  readonly connection: number
  readonly serialization: number
}

/**
 * Whether a unit that failed on `fault` before its COMMIT is run again, and
 * after how long. A rolled-back unit changed nothing, so running it again is
 * safe: once on a fresh connection after a lost one (the pool drops a broken
 * connection), twice after a serialization failure or deadlock. A drained
 * pool, a lock or statement timeout and a bug are answered at once.
 */
const nextRetry = (
  fault: DatabaseFault,
  retries: Retries
): Option.Option<{ retries: Retries; delay: Duration.Duration }> => {
  if (fault.kind === "connection" && fault.retryable && retries.connection < 1) {
    return Option.some({ retries: { ...retries, connection: retries.connection + 1 }, delay: Duration.millis(100) })
  }
  if (fault.kind === "serialization" && retries.serialization < 2) {
    // PostgreSQL has already aborted this side of the deadlock; the other side goes on, so no wait is needed.
    return Option.some({ retries: { ...retries, serialization: retries.serialization + 1 }, delay: Duration.zero })
  }
  return Option.none()
}

const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const bridge = yield* OutboundBridge
  const feed = yield* FeedMode

  /**
   * One attempt: the transaction with fresh staging and outbox, `effect`
   * given the unit as `CurrentUnit`. `committing` turns true once the body
   * has succeeded, i.e. when the only statement left is COMMIT: a fault
   * after that may have committed.
   */
  const attempt = <A, E, R>(
    workspace: Workspace,
    correlationId: string,
    parentCorrelationId: string | null,
    effect: Effect.Effect<A, E, R>
  ) =>
    Effect.gen(function* () {
      const outbox: Array<BusinessObjectEvent> = []
      let committing = false
      let auditRows = 0
      // The staging area is a resource of the transaction: acquired inside it, released with it, and on any
      // failure discarded unflushed.
      const exit = yield* Effect.acquireUseRelease(
        Effect.sync(() => makeAuditStaging(sql, workspace, parentCorrelationId, feed.mode)),
        (staging) =>
          Effect.gen(function* () {
            const value = yield* Effect.provideService(effect, CurrentUnit, {
              workspace,
              correlationId,
              staging,
              outbox
            })
            if (outbox.length > 0) yield* bridge.stage(workspace, outbox, correlationId)
            // Last before COMMIT: in lock mode the flush locks the workspace's feed position until COMMIT; in WAL
            // mode it takes no lock and emits the unit's message for the positioner (docs/feed.md, "Order").
            auditRows = yield* staging.flush
            committing = true
            return value
          }),
        (staging, exit) => (Exit.isFailure(exit) ? staging.discard : Effect.void)
      ).pipe(sql.withTransaction, orDieOnSqlError, Effect.exit)
      yield* Exit.isSuccess(exit)
        ? Effect.andThen(Metric.update(committed, 1), Metric.update(auditRowsWritten, auditRows))
        : Metric.update(rolledBack, 1)
      return { exit, outbox, committing }
    })

  const begin = <A, E, R>(
    workspace: Workspace,
    effect: Effect.Effect<A, E, R>
  ): Effect.Effect<A, E, Exclude<R, CurrentUnit>> =>
    Effect.gen(function* () {
      // Kept across retries: the attempts that rolled back left nothing under it but log lines.
      const correlationId = crypto.randomUUID()
      const parentCorrelationId = Option.getOrNull(yield* ParentCorrelation)
      // Inside a transaction opened by hand (provisioning) the unit is a savepoint: the owner retries, not the unit.
      const ownsTransaction = Option.isNone(yield* Effect.serviceOption(sql.transactionService))
      // Without tracing there is no span to annotate.
      if (yield* References.TracerEnabled) {
        yield* Effect.annotateCurrentSpan({
          "workspace.slug": workspace.slug,
          "workspace.id": workspace.id,
          "correlation.id": correlationId,
          ...actorSpanAttributes(yield* CurrentActor)
        })
      }
      for (let retries: Retries = { connection: 0, serialization: 0 }; ; ) {
        const { exit, outbox, committing } = yield* attempt(workspace, correlationId, parentCorrelationId, effect)
        if (Exit.isSuccess(exit)) {
          yield* bridge.handOff(workspace, outbox)
          return exit.value
        }
        const fault = databaseFaultOf(exit.cause)
        if (Option.isNone(fault) || !ownsTransaction) return yield* exit
        if (committing && fault.value.kind === "connection") {
          return yield* Effect.die(new CommitOutcomeUnknown({ cause: fault.value.error }))
        }
        const next = nextRetry(fault.value, retries)
        if (Option.isNone(next)) return yield* exit
        yield* Effect.logWarning(`unit of work retried after a database fault: ${fault.value.kind}`).pipe(
          Effect.annotateLogs({ correlationId, workspace: workspace.slug })
        )
        if (Duration.isGreaterThan(next.value.delay, Duration.zero)) yield* Effect.sleep(next.value.delay)
        retries = next.value.retries
      }
    }).pipe(withSpanIfTracing("unit of work", { captureStackTrace: false }))

  /**
   * Runs `effect` in a unit of work on `workspace`, or in the one already in
   * progress (which must be on the same workspace: a unit never spans two).
   */
  const run = <A, E, R>(
    workspace: Workspace,
    effect: Effect.Effect<A, E, R>
  ): Effect.Effect<A, E, Exclude<R, CurrentUnit>> =>
    Effect.flatMap(Effect.serviceOption(CurrentUnit), (current) => {
      if (Option.isNone(current)) return begin(workspace, effect)
      if (current.value.workspace.id !== workspace.id) {
        return Effect.die(
          new Error(`a unit of work on ${current.value.workspace.slug} cannot write to ${workspace.slug}`)
        )
      }
      // Joining: the unit in progress is given again, so its staging, outbox and correlation id are shared.
      return Effect.provideService(effect, CurrentUnit, current.value)
    })

  return { run } as const
})

/**
 * A unit of work: one database transaction with one correlation id, given
 * to the code it runs as `CurrentUnit` (workspace, correlation id, audit
 * staging, event outbox). Audit rows are staged as events happen and written
 * by one INSERT as the last statement before COMMIT (after the workflow runs
 * are staged: the INSERT takes the workspace's feed-position lock, held to COMMIT); the staging area is
 * acquired inside the transaction for each attempt and, on any failure,
 * discarded unflushed.
 * The unit's events reach the workflow engine durably inside the transaction
 * and the broadcast publisher after COMMIT; after ROLLBACK neither.
 * A unit started inside another one joins it.
 *
 * A unit that failed on a database fault before COMMIT was sent is run again
 * whole (fresh staging and outbox, same correlation id): once after a lost
 * connection, up to twice after a serialization failure or deadlock. A
 * connection lost during COMMIT leaves the outcome unknown: never retried, it
 * dies with `CommitOutcomeUnknown` (answered 503, docs/reliability.md).
 *
 * A unit is one span, `unit of work`, with the workspace, the correlation id
 * and the actor as attributes; its statements (and retries) are under it.
 */
export class UnitOfWork extends Context.Service<UnitOfWork, Effect.Success<typeof make>>()("UnitOfWork") {
  static readonly layer = Layer.effect(UnitOfWork, make)
}
