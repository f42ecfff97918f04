import { Layer } from "effect"
import { FeedHealth } from "./FeedHealth"
import { FeedMode } from "./FeedMode"
import { PositionedNotices } from "./PositionedNotices"
import { Positioner } from "./Positioner"

/** The feed's mode, chosen at start-up, with the positioner, its notices and its health (docs/feed.md, "Order"). */
export const FeedPositionsLive = FeedHealth.layer.pipe(
  Layer.provideMerge(Layer.merge(Positioner.layer, PositionedNotices.layer)),
  Layer.provideMerge(FeedMode.layer)
)
