import { Context, Effect, Option } from "effect"
import type { Actor } from "../api/Actor"
import type { Cause } from "../api/Cause"

/**
 * The actor of whatever runs in this fiber (and the fibers it forks). It is a
 * reference with no default actor on purpose: a write path that never set one
 * reaches the audit listener with none, and the unit of work fails there.
 */
export const CurrentActor = Context.Reference<Option.Option<Actor>>("CurrentActor", {
  defaultValue: () => Option.none()
})

/** The innermost frame above the current write: an action, an event listener, a job, a chat turn. */
export const CurrentCause = Context.Reference<Cause | null>("CurrentCause", {
  defaultValue: () => null
})

/** Runs `effect` as `actor`. */
export const withActor =
  (actor: Actor) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.provideService(effect, CurrentActor, Option.some(actor))

/** Runs `effect` inside a frame: every write it makes names `cause` as its cause. */
export const withCause =
  (cause: Cause) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.provideService(effect, CurrentCause, cause)
