import type { Scope } from "effect"
import { Clock, Effect, Metric, PubSub } from "effect"
import { subscriptionLosses } from "../metrics/ServiceMetrics"
import type { BroadcastStatus } from "../api/BroadcastStatus"

/** The subscription is live again after an outage: whatever a tab shows may have missed hints. */
export interface Resubscribed {
  readonly outageMs: number
  /** Hints this instance could not publish during the outage (other instances' are unknown). */
  readonly droppedPublishes: number
}

export const inProcessStatus: BroadcastStatus = {
  subscribed: true,
  lostSince: null,
  outages: 0,
  lastOutageMs: null,
  droppedPublishes: 0
}

export interface SubscriptionHealth {
  readonly lost: Effect.Effect<void>
  readonly restored: Effect.Effect<void>
  readonly publishFailed: Effect.Effect<void>
  readonly status: Effect.Effect<BroadcastStatus>
  readonly resubscriptions: Effect.Effect<PubSub.Subscription<Resubscribed>, never, Scope.Scope>
}

/**
 * The bookkeeping of a transport's subscription: `lost` and `restored` are
 * told by the transport (idempotent, so repeated connection events count one
 * outage), `publishFailed` by its publish. A loss is logged as a warning, a
 * restoration as info with the outage's duration and the hints dropped
 * meanwhile, and announced once on `resubscriptions`.
 */
export const makeSubscriptionHealth: Effect.Effect<SubscriptionHealth, never, Scope.Scope> = Effect.gen(function* () {
  const announcements = yield* Effect.acquireRelease(PubSub.unbounded<Resubscribed>(), PubSub.shutdown)
  let status: BroadcastStatus = inProcessStatus
  let lostAt = 0
  let droppedAtLoss = 0

  const lost = Effect.gen(function* () {
    if (!status.subscribed) return
    lostAt = yield* Clock.currentTimeMillis
    droppedAtLoss = status.droppedPublishes
    status = { ...status, subscribed: false, lostSince: new Date(lostAt).toISOString(), outages: status.outages + 1 }
    yield* Metric.update(subscriptionLosses, 1)
    yield* Effect.logWarning(
      "broadcast subscription lost: hints published meanwhile, here or by other instances, are lost"
    )
  })

  const restored = Effect.gen(function* () {
    if (status.subscribed) return
    const outageMs = (yield* Clock.currentTimeMillis) - lostAt
    const droppedPublishes = status.droppedPublishes - droppedAtLoss
    status = { ...status, subscribed: true, lostSince: null, lastOutageMs: outageMs }
    yield* Effect.logInfo("broadcast subscription restored").pipe(
      Effect.annotateLogs({ outageMs, droppedPublishes, note: "hints other instances published meanwhile are unknown" })
    )
    yield* PubSub.publish(announcements, { outageMs, droppedPublishes })
  })

  return {
    lost,
    restored,
    publishFailed: Effect.sync(() => {
      status = { ...status, droppedPublishes: status.droppedPublishes + 1 }
    }),
    status: Effect.sync(() => status),
    resubscriptions: PubSub.subscribe(announcements)
  }
})
