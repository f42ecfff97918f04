import { Cause, Effect, Layer } from "effect"
import { AppConfig } from "../config/AppConfig"
import { pruneOnce } from "./pruning"

/**
 * Every `PRUNE_INTERVAL_MS`, one bounded pruning pass (see `pruning.ts`):
 * expired sessions, old completed-run markers and idempotency keys. Every instance runs it;
 * passes on several instances at once take different rows. A failed pass is
 * logged and the next one tries again.
 */
export const PrunerLive = Layer.effectDiscard(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const pass = pruneOnce().pipe(
      Effect.tap((report) =>
        report.sessions + report.completedRuns + report.idempotencyKeys > 0
          ? Effect.logInfo("pruned", report)
          : Effect.void
      ),
      Effect.catchCause((cause) => Effect.logWarning("pruning failed; the next pass tries again", Cause.pretty(cause)))
    )
    yield* Effect.forkScoped(Effect.forever(Effect.andThen(Effect.sleep(config.pruneInterval), pass)))
  })
)
