import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Predicate } from "effect"
import type { MissingActor } from "../context/MissingActor"

const isServerFault = (error: unknown): error is SqlError | MissingActor =>
  Predicate.isTagged(error, "SqlError") || Predicate.isTagged(error, "MissingActor")

/**
 * A write route's failed statement or missing actor is the server's fault,
 * not the caller's: turned into a defect, it is logged and answered 500.
 */
export const asServerFaults = <A, E, R>(
  effect: Effect.Effect<A, E | SqlError | MissingActor, R>
): Effect.Effect<A, Exclude<E, SqlError | MissingActor>, R> => Effect.catchIf(effect, isServerFault, Effect.die)
