import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import { Deferred, Effect, Fiber } from "effect"

/**
 * Runs `take` (a statement that takes a lock) in a transaction of its own and
 * holds the transaction open; returns the effect that ends it (COMMIT). The
 * lock is held once this returns; the transaction also ends with the scope.
 */
export const holdInTransaction = <R>(take: Effect.Effect<unknown, SqlError, R>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const held = yield* Deferred.make<void>()
    const release = yield* Deferred.make<void>()
    const fiber = yield* sql
      .withTransaction(Effect.andThen(take, Effect.andThen(Deferred.succeed(held, undefined), Deferred.await(release))))
      .pipe(Effect.orDie, Effect.forkScoped)
    yield* Deferred.await(held)
    return Deferred.succeed(release, undefined).pipe(Effect.andThen(Fiber.join(fiber)))
  })
