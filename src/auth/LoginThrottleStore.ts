import type { Effect } from "effect"
import { Context } from "effect"
import type { ThrottlePolicy } from "./ThrottleCounter"

/**
 * Where failed sign-ins are counted (see `ThrottleCounter` for the rules):
 * in Redis when it is configured, so every instance shares the counts, in
 * this process otherwise. Callers pass the current time (Effect's Clock), so
 * tests can move it. Every operation is atomic.
 */
export interface LoginThrottleStoreShape {
  /** Counts one attempt against `key`; > 0: refused for that many ms, nothing counted. */
  readonly attempt: (key: string, nowMs: number, policy: ThrottlePolicy) => Effect.Effect<number>
  /** The attempt succeeded: its failure is given back. */
  readonly forgiveOne: (key: string, policy: ThrottlePolicy) => Effect.Effect<void>
  /** Forgets every failure of `key`. */
  readonly clear: (key: string) => Effect.Effect<void>
  readonly kind: "redis" | "in-process"
}

export class LoginThrottleStore extends Context.Service<LoginThrottleStore, LoginThrottleStoreShape>()(
  "LoginThrottleStore"
) {}
