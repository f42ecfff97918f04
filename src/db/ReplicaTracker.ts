import type { SqlError } from "effect/sql/SqlError"
import { Deferred, Duration, Effect, Option, Queue, Schedule } from "effect"
import { formatLsn } from "../api/CommitPosition"

/** What `GET /api/health` shows of the replica. */
export interface ReplicaHealthShape {
  /** `up`: serves reads; `lagging`: answers but is behind by more than `maxLag` (reads go to the primary); `down`. */
  readonly status: "up" | "lagging" | "down"
  /** How long the replica has been missing WAL the primary had written, at the last check; none while down. */
  readonly lagMs: number | null
  /** The replica's last replayed position (`pg_last_wal_replay_lsn()`); none while down. */
  readonly replayLsn: string | null
}

/** How often the replica's position and the primary's are compared. */
export const replicaCheckInterval = Duration.seconds(1)
/** A replica further behind than this serves no reads: they go to the primary until it has caught up. */
export const maxLag = Duration.seconds(5)
/** The longest a read sent with a commit position waits for the replica before it goes to the primary. */
export const replayWait = Duration.millis(250)
/** A check or a poll of the replica that takes longer counts as the replica being down. */
const answerBudget = Duration.millis(750)
/** Between two polls while reads wait: the replica replays a commit in about a millisecond or two. */
const pollPause = Duration.millis(1)

interface Waiter {
  readonly lsn: bigint
  readonly done: Deferred.Deferred<boolean>
}

/**
 * The replica's state, kept by a check every `replicaCheckInterval` (up or
 * down, how far behind) and by the reads themselves (a connection fault on
 * the replica marks it down at once), and the wait of a read for a commit
 * position: one poller asks the replica for its replayed position while any
 * read waits, so a hundred waiting reads cost one query per poll.
 *
 * `replayed` is the replica's position as last seen: it only grows (a
 * replica never un-replays), so a read whose position is behind it needs no
 * query at all.
 */
export const makeReplicaTracker = (positions: {
  /** `pg_last_wal_replay_lsn()` on the replica; none when it is not a standby (it answers NULL). */
  readonly replica: Effect.Effect<Option.Option<bigint>, SqlError>
  /** `pg_current_wal_insert_lsn()` on the primary. */
  readonly primary: Effect.Effect<bigint, SqlError>
}) =>
  Effect.gen(function* () {
    let status: ReplicaHealthShape["status"] = "down"
    let lagMs: number | null = null
    let replayed = -1n
    /** Positions the primary had reached, and when, that the replica had not replayed at the last check. */
    let behind: Array<{ readonly at: number; readonly lsn: bigint }> = []
    const waiters = new Set<Waiter>()
    const wanted = yield* Queue.sliding<true>(1)

    const replicaPosition = positions.replica.pipe(
      Effect.timeoutOption(answerBudget),
      Effect.map(Option.flatten),
      Effect.orElseSucceed(() => Option.none<bigint>())
    )

    const settle = () => {
      for (const waiter of waiters) {
        if (waiter.lsn <= replayed || status !== "up") {
          waiters.delete(waiter)
          Deferred.doneUnsafe(waiter.done, Effect.succeed(waiter.lsn <= replayed))
        }
      }
    }

    const seen = (position: Option.Option<bigint>) => {
      if (Option.isNone(position)) {
        markDown()
        return
      }
      if (position.value > replayed) replayed = position.value
      if (status === "down") status = "up"
    }

    const markDown = () => {
      status = "down"
      lagMs = null
      behind = []
      settle()
    }

    /** The primary's position first, then the replica's: a sample the replica has passed was caught up with. */
    const health = (): ReplicaHealthShape => ({
      status,
      lagMs: status === "down" ? null : lagMs,
      replayLsn: status === "down" || replayed < 0n ? null : formatLsn(replayed)
    })

    const compare = Effect.gen(function* () {
      const primary = yield* positions.primary.pipe(
        Effect.asSome,
        Effect.catchCause(() => Effect.succeedNone)
      )
      const at = Date.now()
      seen(yield* replicaPosition)
      if (status === "down") return
      behind = behind.filter((sample) => sample.lsn > replayed)
      if (Option.isSome(primary) && primary.value > replayed) behind.push({ at, lsn: primary.value })
      lagMs = behind[0] === undefined ? 0 : Date.now() - behind[0].at
      status = lagMs > Duration.toMillis(maxLag) ? "lagging" : "up"
      settle()
    })

    /** The state last logged: a read that finds the replica gone changes the state between two checks. */
    let logged: ReplicaHealthShape["status"] | undefined
    /** `compare`, then a log line when the state is not the one last logged. */
    const check = Effect.ensuring(
      compare,
      Effect.suspend(() => {
        if (logged === status) return Effect.void
        logged = status
        return Effect.logWarning(`read replica: ${status}`).pipe(Effect.annotateLogs({ ...health() }))
      })
    )

    const poll = Effect.gen(function* () {
      yield* Queue.take(wanted)
      while (waiters.size > 0) {
        seen(yield* replicaPosition)
        settle()
        if (waiters.size > 0) yield* Effect.sleep(pollPause)
      }
    })

    yield* Effect.forkScoped(Effect.repeat(check, Schedule.spaced(replicaCheckInterval)))
    yield* Effect.forkScoped(Effect.forever(poll))

    return {
      /** Reads without a position may go to the replica. */
      usable: () => status === "up",
      markDown: Effect.sync(markDown),
      /** True once the replica has replayed `lsn`, within `replayWait`; false when it has not, or is not usable. */
      awaitReplayed: (lsn: bigint): Effect.Effect<boolean> => {
        if (lsn <= replayed) return Effect.succeed(true)
        if (status !== "up") return Effect.succeed(false)
        return Effect.gen(function* () {
          const waiter: Waiter = { lsn, done: yield* Deferred.make<boolean>() }
          waiters.add(waiter)
          yield* Queue.offer(wanted, true)
          return yield* Deferred.await(waiter.done).pipe(
            Effect.timeoutOrElse({ duration: replayWait, orElse: () => Effect.succeed(false) }),
            Effect.ensuring(Effect.sync(() => waiters.delete(waiter)))
          )
        })
      },
      health
    } as const
  })

export type ReplicaTracker = Effect.Success<ReturnType<typeof makeReplicaTracker>>
