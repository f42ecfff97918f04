import { SqlClient } from "effect/sql"
import {
  Cause,
  Context,
  Deferred,
  Duration,
  Effect,
  Exit,
  Layer,
  Metric,
  Option,
  Queue,
  Redacted,
  Ref,
  Schedule
} from "effect"
import pg from "pg"
import { LogicalReplicationService, PgoutputPlugin } from "pg-logical-replication"
import { AppConfig } from "../config/AppConfig"
import { SchemasMigrated } from "../db/SchemasMigrated"
import { feedPositionDelay, feedPositionedRows } from "../metrics/ServiceMetrics"
import type { DecodedCommit, SlotEvent } from "./commits"
import { makeCommitAssembler } from "./commits"
import { ensureSlot, FeedMode, publicationOf, takeSlot } from "./FeedMode"
import { lsnOf, lsnText } from "./lsn"
import { positionCommits } from "./positionCommits"
import { positionAllWaiting } from "./positionWaiting"
import { slotEventOf } from "./slotEvents"

/** What this instance's positioner is doing, for `/api/health`. */
export interface PositionerState {
  /** This instance holds the election (and so the slot). */
  readonly holder: boolean
  /** Commit to positioned, of the last batch this instance positioned (ms); none: it has positioned nothing. */
  readonly delayMs: number | null
}

/** The session advisory lock the candidates wait on: whoever holds it reads the slot. */
export const electionKey = (slot: string) => `abs.feed-positioner:${slot}`

/** Rows positioned per statement at most (a commit is never split): bounds a bulk import's transactions. */
const rowsPerTransaction = 1_000

/**
 * After a batch, the positioner waits this long before it takes the next:
 * what arrives meanwhile goes in one batch. A batch's cost is mostly fixed
 * (about 0.9 ms of its backend: the statement's start, its COMMIT and
 * NOTIFY): under 32 writers, batches of about 14 units as they came cost
 * the positioner's backend 0.12 ms per unit, batches of about 25 after the
 * pause 0.08 (BENCHMARKS.md, "Feed positions from the WAL: batches"), for at
 * most 10 ms more delay. A commit arriving while the positioner is idle (no
 * batch in the last 10 ms) is positioned at once.
 */
const batchPause = Duration.millis(10)

/** The server's keepalives are passed to the consumer at most this often (the latest of them). */
const keepaliveEvery = Duration.millis(50)

/** Between two attempts to hold the slot after a failure (a slot still active elsewhere, a lost connection). */
const retryDelay = Duration.millis(200)

const connectionString = (url: Redacted.Redacted) => Redacted.value(url)

const make = Effect.gen(function* () {
  const feed = yield* FeedMode
  const config = yield* AppConfig
  const sql = yield* SqlClient.SqlClient
  const state = yield* Ref.make<PositionerState>({ holder: false, delayMs: null })
  const migrated = yield* SchemasMigrated

  if (feed.mode === "lock" || Option.isNone(config.databaseUrl)) {
    // Rows a WAL-mode run left waiting (the deployment switched to lock mode) are positioned at start.
    yield* migrated.wait.pipe(
      Effect.andThen(positionAllWaiting),
      Effect.tap((n) =>
        n > 0 ? Effect.logInfo(`feed positions: ${n} waiting rows positioned at start-up`) : Effect.void
      ),
      Effect.retry({ schedule: Schedule.spaced("1 second"), times: 30 }),
      Effect.catchCause((cause) => Effect.logWarning("feed positions: the start-up scan failed", Cause.pretty(cause))),
      Effect.provideService(SqlClient.SqlClient, sql),
      Effect.forkScoped
    )
    return { state: Ref.get(state) } as const
  }

  const url = connectionString(config.databaseUrl.value)
  const slot = feed.slot
  const applicationName = `${config.databaseApplicationName}/feed-positioner`

  /** Reads the slot until something fails; the caller's scope closes the connections. */
  const stream = Effect.gen(function* () {
    const events = yield* Queue.unbounded<SlotEvent>()
    const ended = yield* Deferred.make<never, Error>()
    let confirmed = 0n
    const service = new LogicalReplicationService(
      { connectionString: url, application_name: applicationName },
      { acknowledge: { auto: false, timeoutSeconds: 0 } }
    )
    // The library acknowledges the position it is given plus one: the flush position is the commit's end itself.
    const acknowledge = (lsn: bigint) => void service.acknowledge(lsnText(lsn > 0n ? lsn - 1n : 0n)).catch(() => {})
    yield* Effect.addFinalizer(() => Effect.promise(() => service.destroy().catch(() => service)))
    service.on("data", (_lsn: string, message) => {
      const event = slotEventOf(message)
      if (event !== undefined) Queue.offerUnsafe(events, event)
    })
    // While a batch waits to be positioned the server sends a keepalive each time it wakes for new WAL (about
    // one per commit anywhere): passing each on woke the consumer and acknowledged once per keepalive. The
    // latest is passed on at most once per `keepaliveEvery` (its position is all they tell); one asking for a
    // reply at once.
    let latestKeepalive: bigint | undefined
    let keepaliveTimer: ReturnType<typeof setTimeout> | undefined
    const passKeepalive = () => {
      keepaliveTimer = undefined
      if (latestKeepalive !== undefined) Queue.offerUnsafe(events, { tag: "keepalive", lsn: latestKeepalive })
      latestKeepalive = undefined
    }
    yield* Effect.addFinalizer(() => Effect.sync(() => clearTimeout(keepaliveTimer)))
    service.on("heartbeat", (lsn: string, _timestamp: number, shouldRespond: boolean) => {
      const at = lsnOf(lsn)
      if (at !== undefined) latestKeepalive = at
      if (shouldRespond) {
        clearTimeout(keepaliveTimer)
        passKeepalive()
        acknowledge(confirmed)
      } else if (keepaliveTimer === undefined)
        keepaliveTimer = setTimeout(passKeepalive, Duration.toMillis(keepaliveEvery))
    })
    service.on("error", (error: Error) => Deferred.doneUnsafe(ended, Exit.fail(error)))
    const plugin = new PgoutputPlugin({ protoVersion: 1, publicationNames: [publicationOf(slot)], messages: true })
    const subscribed = Effect.tryPromise(() => service.subscribe(plugin, slot)).pipe(
      Effect.andThen(Effect.fail(new Error("the replication stream ended")))
    )

    const assemble = makeCommitAssembler()
    const consume = Effect.gen(function* () {
      for (;;) {
        const chunk = yield* Queue.takeAll(events)
        const commits: Array<DecodedCommit> = []
        let upTo = 0n
        for (const event of chunk) {
          const out = assemble(event)
          if (Option.isNone(out)) continue
          const item = out.value
          if (item.tag === "commit") {
            commits.push(item.commit)
            upTo = item.commit.endLsn
          } else if (item.tag === "passed") {
            if (item.lsn > upTo) upTo = item.lsn
          } else yield* Effect.logWarning(`feed positions: ${item.reason}; skipped`)
        }
        // Slices of about `rowsPerTransaction` rows: a bulk import's commits are not one huge transaction.
        for (let from = 0; from < commits.length; ) {
          let to = from
          let rows = 0
          while (to < commits.length && (to === from || rows < rowsPerTransaction)) {
            for (const unit of commits[to]?.units ?? []) rows += unit.contents.length
            to += 1
          }
          const slice = commits.slice(from, to)
          const n = yield* positionCommits(slice)
          const now = BigInt(Date.now()) * 1000n
          let worst = 0
          for (const commit of slice) {
            const seconds = Math.max(0, Number(now - commit.commitMicros) / 1_000_000)
            worst = Math.max(worst, seconds)
            yield* Metric.update(feedPositionDelay, seconds)
          }
          yield* Metric.update(feedPositionedRows, n)
          yield* Ref.update(state, (s) => ({ ...s, delayMs: Math.round(worst * 1000) }))
          const last = slice[slice.length - 1]
          if (to < commits.length && last !== undefined && last.endLsn > confirmed) {
            confirmed = last.endLsn
            acknowledge(confirmed)
          }
          from = to
        }
        if (upTo > confirmed) {
          confirmed = upTo
          acknowledge(upTo)
        }
        if (commits.length > 0) yield* Effect.sleep(batchPause)
      }
    })
    // Whichever ends first ends the term, failing: the stream, its error, or the consumer's failure.
    return yield* Effect.raceFirst(subscribed, Effect.raceFirst(Deferred.await(ended), consume))
  })

  /** One term as the holder: the election's lock, the slot made if missing, the waiting rows, then the stream. */
  const hold = Effect.gen(function* () {
    const lost = yield* Deferred.make<never, Error>()
    const client = yield* Effect.acquireRelease(
      Effect.tryPromise(async () => {
        const c = new pg.Client({ connectionString: url, application_name: `${applicationName}/election` })
        c.on("error", (error) => Deferred.doneUnsafe(lost, Exit.fail(error)))
        c.on("end", () => Deferred.doneUnsafe(lost, Exit.fail(new Error("the election's connection closed"))))
        await c.connect()
        return c
      }),
      (c) => Effect.promise(() => c.end().catch(() => undefined))
    )
    // Waits (on the server) while another instance holds it; its death (its connection dropping) releases it.
    yield* Effect.tryPromise(() => client.query("SELECT pg_advisory_lock(hashtext($1))", [electionKey(slot)]))
    yield* Effect.acquireRelease(
      Ref.update(state, (s) => ({ ...s, holder: true })),
      () => Ref.update(state, (s) => ({ ...s, holder: false }))
    )
    yield* Effect.logInfo(`feed positions: this instance reads the slot ${slot}`)
    yield* ensureSlot(slot)
    for (const walsender of yield* takeSlot(slot)) {
      yield* Effect.logInfo(
        `feed positions: the previous holder's walsender (pid ${walsender.pid}) ended${walsender.gone ? "" : " (not gone after 5 s)"}`
      )
    }
    const waiting = yield* positionAllWaiting
    if (waiting > 0) {
      yield* Metric.update(feedPositionedRows, waiting)
      yield* Effect.logInfo(`feed positions: ${waiting} waiting rows positioned before reading the slot`)
    }
    return yield* Effect.raceFirst(stream, Deferred.await(lost))
  }).pipe(Effect.scoped)

  // A fresh database has no tables before the start-up migrations: the first term waits for them.
  yield* migrated.wait.pipe(
    Effect.andThen(
      hold.pipe(
        Effect.catchCause((cause) =>
          Cause.hasInterruptsOnly(cause)
            ? Effect.failCause(cause)
            : Effect.logWarning("feed positions: the positioner stopped; trying again", Cause.pretty(cause))
        ),
        Effect.andThen(Effect.sleep(retryDelay)),
        Effect.forever
      )
    ),
    Effect.provideService(SqlClient.SqlClient, sql),
    Effect.forkScoped
  )
  return { state: Ref.get(state) } as const
})

/**
 * Feed positions from the WAL (docs/feed.md, "Order"): every instance is a
 * candidate; the one holding the election's session advisory lock reads the
 * deployment's logical replication slot and, for each decoded commit in
 * commit order, gives its units' rows their positions and links (batched:
 * one transaction for what has arrived), acknowledging the slot only after
 * that transaction committed. Its death drops its connections: the lock and
 * the slot are free, and the next candidate goes on from the slot's
 * confirmed position. In lock mode it only positions, once at start-up,
 * rows a WAL-mode run left waiting.
 */
export class Positioner extends Context.Service<Positioner, Effect.Success<typeof make>>()("Positioner") {
  static readonly layer = Layer.effect(Positioner, make)
}
