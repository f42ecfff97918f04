import { Context, Option } from "effect"

/**
 * The unit of work whose job or workflow run is running now: set by the
 * workers from what the queue element captured when the unit enqueued it.
 * The rows of a unit begun under it name it as their parent, which is how
 * the correlation view finds a unit's cascade (docs/feed.md, "Correlation").
 */
export const ParentCorrelation = Context.Reference<Option.Option<string>>("ParentCorrelation", {
  defaultValue: () => Option.none()
})
