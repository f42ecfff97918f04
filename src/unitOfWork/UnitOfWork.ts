import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Exit, Option } from "effect"
import { AuditStaging, makeAuditStaging } from "../audit/AuditStaging"
import { CorrelationId } from "../context/Frames"
import type { BusinessObjectEvent } from "../events/BusinessObjectEvent"
import { EventOutbox } from "../events/EventOutbox"
import { OutboundBridge } from "../outbound/OutboundBridge"
import { CurrentWorkspace } from "../tenancy/CurrentWorkspace"
import type { Workspace } from "../tenancy/Workspace"

/** What code running inside a unit of work has in context. */
export type InUnit = AuditStaging | CorrelationId | CurrentWorkspace | EventOutbox

/**
 * A unit of work: one database transaction with one correlation id. Audit
 * rows are staged as events happen and written by one INSERT as the last
 * statement before COMMIT; the staging area is a resource of the
 * transaction's scope, and on any failure it is discarded unflushed. The
 * unit's events reach the workflow engine durably inside the transaction and
 * the broadcast publisher after COMMIT; after ROLLBACK neither.
 * A unit started inside another one joins it.
 */
export class UnitOfWork extends Effect.Service<UnitOfWork>()("UnitOfWork", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const bridge = yield* OutboundBridge

    const begin = <A, E, R>(workspace: Workspace, effect: Effect.Effect<A, E, R | InUnit>): Effect.Effect<A, E | SqlError, R> =>
      Effect.gen(function* () {
        const correlationId = crypto.randomUUID()
        const outbox: Array<BusinessObjectEvent> = []
        const result = yield* Effect.gen(function* () {
          const staging = yield* Effect.acquireRelease(
            Effect.provideService(makeAuditStaging(workspace), SqlClient.SqlClient, sql),
            (staging, exit) => (Exit.isFailure(exit) ? staging.discard : Effect.void)
          )
          const value = yield* effect.pipe(
            Effect.provideService(AuditStaging, staging),
            Effect.provideService(CorrelationId, correlationId),
            Effect.provideService(CurrentWorkspace, workspace),
            Effect.provideService(EventOutbox, outbox)
          )
          yield* staging.flush
          yield* bridge.stage(workspace, outbox)
          return value
        }).pipe(
          Effect.scoped,
          sql.withTransaction,
          // Scope is closed above; the type system cannot see that R never held it.
          (transaction) => transaction as Effect.Effect<A, E | SqlError, R>
        )
        yield* bridge.handOff(workspace, outbox)
        return result
      })

    /**
     * Runs `effect` in a unit of work on `workspace`, or in the one already in
     * progress (which must be on the same workspace: a unit never spans two).
     */
    const run = <A, E, R>(workspace: Workspace, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError, Exclude<R, InUnit>> =>
      Effect.flatMap(Effect.serviceOption(CurrentWorkspace), (current) => {
        if (Option.isNone(current)) {
          return begin<A, E, Exclude<R, InUnit>>(workspace, effect as Effect.Effect<A, E, Exclude<R, InUnit> | InUnit>)
        }
        if (current.value.id !== workspace.id) {
          return Effect.dieMessage(`a unit of work on ${current.value.slug} cannot write to ${workspace.slug}`)
        }
        // The unit in progress provided every InUnit service together with its workspace.
        return effect as Effect.Effect<A, E, Exclude<R, InUnit>>
      })

    return { run } as const
  })
}) {}

