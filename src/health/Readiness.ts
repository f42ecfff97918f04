import { Context, Effect, Layer, Ref } from "effect"

/**
 * Whether this instance should be sent new work. It turns "draining" once
 * shutdown begins (SIGTERM, SIGINT): readiness then answers 503 so a load
 * balancer stops routing here, while requests already in flight are answered.
 */
export class Readiness extends Context.Service<Readiness>()("Readiness", {
  make: Effect.gen(function* () {
    const draining = yield* Ref.make(false)
    return {
      /** Shutdown has begun: stop taking new work. Idempotent. */
      startDraining: Ref.set(draining, true),
      isDraining: Ref.get(draining)
    } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
