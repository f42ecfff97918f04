import { isSqlError } from "effect/sql/SqlError"
import type { SqlError } from "effect/sql/SqlError"
import { Effect } from "effect"

/**
 * The SQL error policy at a repository method's edge (docs/reliability.md,
 * "One SQL error policy"): a failed statement becomes a defect, the method's
 * own typed errors stay. Use it where a method also fails with a domain
 * error (a transaction around a lookup that may answer NotFound); a method
 * whose only errors are the database's (a lookup: its statement and the
 * decoding of its rows) ends in `Effect.orDie` instead. The unit of work
 * (retries) and the error middleware (the HTTP answer) read the SqlError back
 * from the defect.
 */
export const orDieOnSqlError = <A, E, R>(
  effect: Effect.Effect<A, E | SqlError, R>
): Effect.Effect<A, Exclude<E, SqlError>, R> => Effect.catchIf(effect, isSqlError, Effect.die, Effect.fail)
