import { Cause, Context, Deferred, Duration, Effect, Exit, Layer, Option, Redacted } from "effect"
import pg from "pg"
import { AppConfig } from "../config/AppConfig"
import { FeedMode } from "./FeedMode"
import { positionedChannel } from "./positionCommits"

type Wake = () => void

const make = Effect.gen(function* () {
  const feed = yield* FeedMode
  const config = yield* AppConfig
  const listeners = new Map<string, Set<Wake>>()
  const wakeAll = () => {
    for (const set of listeners.values()) for (const wake of set) wake()
  }

  /** Calls `wake` each time rows of the workspace get positions, on any instance, until the returned detach. */
  const attach = (workspaceId: string, wake: Wake) => {
    const set = listeners.get(workspaceId) ?? new Set<Wake>()
    set.add(wake)
    listeners.set(workspaceId, set)
    return () => {
      set.delete(wake)
      if (set.size === 0 && listeners.get(workspaceId) === set) listeners.delete(workspaceId)
    }
  }

  if (feed.mode === "wal" && Option.isSome(config.databaseUrl)) {
    const url = Redacted.value(config.databaseUrl.value)
    const listen = Effect.gen(function* () {
      const closed = yield* Deferred.make<never, Error>()
      const client = yield* Effect.acquireRelease(
        Effect.tryPromise(async () => {
          const c = new pg.Client({
            connectionString: url,
            application_name: `${config.databaseApplicationName}/feed-notices`
          })
          c.on("error", (error) => Deferred.doneUnsafe(closed, Exit.fail(error)))
          c.on("end", () => Deferred.doneUnsafe(closed, Exit.fail(new Error("the connection closed"))))
          c.on("notification", (notice) => {
            for (const wake of listeners.get(notice.payload ?? "") ?? []) wake()
          })
          await c.connect()
          await c.query(`LISTEN ${positionedChannel}`)
          return c
        }),
        (c) => Effect.promise(() => c.end().catch(() => undefined))
      )
      void client
      // Notices sent while no connection listened are gone: every waiting reader looks again.
      wakeAll()
      return yield* Deferred.await(closed)
    }).pipe(Effect.scoped)
    yield* listen.pipe(
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause)
          ? Effect.failCause(cause)
          : Effect.logWarning(
              "feed positions: the positioned-rows listener stopped; listening again",
              Cause.pretty(cause)
            )
      ),
      Effect.andThen(Effect.sleep(Duration.seconds(1))),
      Effect.forever,
      Effect.forkScoped
    )
  }

  return { attach } as const
})

/**
 * Where WAL mode wakes the feed's readers (FeedWake): the positioner
 * notifies `abs_feed_positioned` with the workspace's id in the transaction
 * that gives its rows their positions, so every instance's listener hears it
 * at that COMMIT, not at the unit's (whose rows are not served yet). In lock
 * mode nothing listens: the commit's broadcast hint is the wake-up.
 */
export class PositionedNotices extends Context.Service<PositionedNotices, Effect.Success<typeof make>>()(
  "PositionedNotices"
) {
  static readonly layer = Layer.effect(PositionedNotices, make)
}
