import { Effect } from "effect"
import type { BroadcastBusShape } from "./BroadcastBus"
import type { StreamRevocation } from "./StreamRevocation"

/**
 * Ends the streams `revocation` names on every instance; call it after the
 * change has committed. Fire-and-forget: a failure (the pub/sub store is
 * down) is logged, never passed to the caller, whose change stands; such a
 * stream still ends by its bounded lifetime (docs/broadcast.md, "The stream contract").
 */
export const revokeStreams = (bus: BroadcastBusShape, revocation: StreamRevocation) =>
  bus
    .revoke(revocation)
    .pipe(
      Effect.catch((error) =>
        Effect.logWarning("stream revocation publish failed: open streams end by their lifetime", error.message).pipe(
          Effect.annotateLogs({ revocation: revocation._tag, reason: revocation.reason })
        )
      )
    )
