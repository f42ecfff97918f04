import * as PersistedQueue from "effect/persistence/PersistedQueue"
import { mkdirSync } from "node:fs"
import { resolve } from "node:path"
import { Cause, Clock, Duration, Effect, Layer, Option, Schema } from "effect"
import { errorFields } from "../api/errors"
import { AppConfig } from "../config/AppConfig"
import { fileFailure } from "../ledger/Digests"
import { requireSigningKey } from "../ledger/LedgerKeys"
import { DurableQueuesLive, immediateRetry, queueName } from "../queue/DurableQueues"
import { digestRound } from "./ledgerDigestRound"

/** `LEDGER_DIGEST_DIR` cannot be made. */
export class DigestDirUnusable extends Schema.TaggedError<DigestDirUnusable>()("DigestDirUnusable", errorFields, {
  httpApiStatus: 500
}) {}

/** A round of digests: the interval it is for, counted from 1970 in intervals. */
const DigestRound = Schema.Struct({ slot: Schema.Int })

/** The round's id in the queue: the same on every instance, so the queue keeps one round per interval. */
export const roundId = (interval: Duration.Duration, slot: number) =>
  `round:${Math.round(Duration.toSeconds(interval))}:${slot}`

/**
 * The deployment's rounds of digests, in the durable queue shared by its
 * instances (`QUEUE_PREFIX`): `offer` puts the round of an interval in
 * (offered again, by any instance, it is the same element), `takeOne` runs
 * the next round offered, writing into `dir`, on whichever instance takes it.
 */
export const makeDigestRounds = Effect.gen(function* () {
  const config = yield* AppConfig
  const queue = yield* PersistedQueue.make({
    name: queueName(config.queuePrefix, "ledger-digests"),
    schema: DigestRound,
    maxAttempts: config.jobMaxAttempts,
    retrySchedule: immediateRetry
  })
  const offer = (slot: number) =>
    queue.offer({ slot }, { id: roundId(config.ledgerDigestInterval, slot) }).pipe(Effect.asVoid)
  const takeOne = (dir: string) =>
    queue.take(() =>
      digestRound(dir).pipe(
        Effect.tap((report) =>
          report.written + report.failed > 0 ? Effect.logInfo("ledger digests written", report) : Effect.void
        ),
        // A round that fails as a whole (the database gone) is not retried: the next interval's round runs anyway.
        Effect.catchCause((cause) => Effect.logWarning("ledger digest round failed", Cause.pretty(cause)))
      )
    )
  return { offer, takeOne } as const
})

/**
 * With `LEDGER_DIGEST_DIR` set: every `LEDGER_DIGEST_INTERVAL` (at each
 * multiple of it since 1970, the same moments on every instance), one
 * round of digests for the whole deployment (see `digestRound`). Every
 * instance offers the interval's round as it begins; the durable queue keeps
 * one element per round id, and one instance takes it. Start-up fails when
 * there is no key to sign with, or the directory cannot be made.
 */
export const LedgerDigesterLive = Layer.effectDiscard(
  Effect.gen(function* () {
    const config = yield* AppConfig
    if (Option.isNone(config.ledgerDigestDir)) return
    const dir = resolve(config.ledgerDigestDir.value)
    yield* requireSigningKey
    yield* Effect.try({
      try: () => mkdirSync(dir, { recursive: true, mode: 0o700 }),
      catch: (error) =>
        new DigestDirUnusable({ message: `LEDGER_DIGEST_DIR ${dir} cannot be made: ${fileFailure(error)}` })
    })
    const rounds = yield* makeDigestRounds
    const intervalMs = Duration.toMillis(config.ledgerDigestInterval)
    const offerNext = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const slot = Math.floor(now / intervalMs) + 1
      yield* Effect.sleep(Duration.millis(slot * intervalMs - now))
      yield* rounds.offer(slot)
    })
    const logged = (what: string) => Effect.catchCause((cause) => Effect.logWarning(what, Cause.pretty(cause)))
    yield* Effect.forkScoped(Effect.forever(offerNext.pipe(logged("ledger digest: offering the round failed"))))
    yield* Effect.forkScoped(Effect.forever(rounds.takeOne(dir).pipe(logged("ledger digest: taking a round failed"))))
    yield* Effect.logInfo("ledger digests: periodic").pipe(
      Effect.annotateLogs({ dir, interval: Duration.format(config.ledgerDigestInterval) })
    )
  })
).pipe(Layer.provide(DurableQueuesLive))
