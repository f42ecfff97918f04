import { Schema } from "effect"
import { errorFields } from "../api/errors"

/** `FEED_POSITIONS=wal` on a database that cannot decode its WAL, or a slot of that name that is not ours: start-up stops. */
export class FeedPositionsUnavailable extends Schema.TaggedError<FeedPositionsUnavailable>()(
  "FeedPositionsUnavailable",
  errorFields
) {}
