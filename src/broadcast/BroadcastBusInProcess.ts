import { Effect, Layer } from "effect"
import { BroadcastBus } from "./BroadcastBus"
import * as BroadcastHub from "./BroadcastHub"

const make = Effect.gen(function* () {
  yield* Effect.logWarning("broadcast bus: in-process, single instance only")
  const hub = yield* BroadcastHub.make()
  return BroadcastBus.of({
    publish: hub.deliver,
    attach: hub.attach,
    subscriberCount: hub.subscriberCount,
    isHealthy: Effect.succeed(true),
    kind: "in-process"
  })
})

/**
 * The bus without Redis: publishing delivers straight to this process's
 * streams (there is no shared subscription to fan out, hence no inbox).
 */
export const layer: Layer.Layer<BroadcastBus> = Layer.effect(BroadcastBus, make)
