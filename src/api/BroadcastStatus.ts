import { Schema } from "effect"

/**
 * How this instance's broadcast subscription fares, since start-up: shown
 * by `GET /api/health`. Hints published by other instances while the
 * subscription was down are lost and cannot be counted: only the hints this
 * instance failed to publish are.
 */
export const BroadcastStatus = Schema.Struct({
  /** The instance's one subscription is live (always, in process). */
  subscribed: Schema.Boolean,
  /** When the current outage began (ISO-8601), or null. */
  lostSince: Schema.NullOr(Schema.String),
  /** Subscriptions lost since start-up. */
  outages: Schema.Finite,
  /** How long the last outage that ended lasted, or null. */
  lastOutageMs: Schema.NullOr(Schema.Finite),
  /** Hints this instance could not publish (the store did not take them) since start-up. */
  droppedPublishes: Schema.Finite
})
export type BroadcastStatus = typeof BroadcastStatus.Type
