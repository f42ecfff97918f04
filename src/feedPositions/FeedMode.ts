import { SqlClient } from "effect/sql"
import { Cause, Context, Effect, Layer } from "effect"
import { orDieOnSqlError } from "../db/orDieOnSqlError"
import { AppConfig } from "../config/AppConfig"
import { DatabaseInfo } from "../db/Database"
import { FeedPositionsUnavailable } from "./FeedPositionsUnavailable"

/** How this deployment takes feed positions (docs/feed.md, "Order"). */
export type FeedModeName = "lock" | "wal"

export interface FeedModeShape {
  readonly mode: FeedModeName
  /** The replication slot WAL mode reads (`FEED_SLOT`), also in lock mode: where WAL mode would read. */
  readonly slot: string
  /** Why this mode: what start-up found. */
  readonly reason: string
}

/** The publication the slot is read with: no table, so only the units' messages are sent. */
export const publicationOf = (slot: string) => `${slot}_messages`

/** The SQLSTATE of a failed statement, wherever in its causes the driver put it. */
export const sqlState = (error: unknown): string | undefined => {
  for (let at: unknown = error; typeof at === "object" && at !== null; at = "cause" in at ? at.cause : undefined) {
    if ("code" in at && typeof at.code === "string") return at.code
  }
  return undefined
}

/**
 * The slot and its publication, made when missing. Two instances starting
 * together may both try: the loser's "already exists" is success. Making a
 * slot waits for the transactions running at that moment to end (its
 * consistent point); rows committed before it are positioned by the
 * positioner's scan (`positionUnpositioned`), the later ones from the slot.
 */
export const ensureSlot = (slot: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const publication = publicationOf(slot)
    const published = yield* sql<{
      n: number
    }>`SELECT count(*)::int AS n FROM pg_publication WHERE pubname = ${publication}`
    if ((published[0]?.n ?? 0) === 0) {
      yield* sql`CREATE PUBLICATION ${sql(publication)}`.pipe(
        Effect.catchIf(
          (error) => sqlState(error) === "42710",
          () => Effect.void
        )
      )
    }
    const slots = yield* sql<{ plugin: string; database: string; lost: boolean }>`
      SELECT plugin, database, coalesce(wal_status = 'lost', false) AS lost
      FROM pg_replication_slots WHERE slot_name = ${slot}`
    const found = slots[0]
    if (found !== undefined) {
      const current = yield* sql<{ name: string }>`SELECT current_database() AS name`
      if (found.plugin !== "pgoutput" || found.database !== current[0]?.name) {
        return yield* new FeedPositionsUnavailable({
          message: `the replication slot ${slot} (FEED_SLOT) exists but is not a pgoutput slot of this database; choose another FEED_SLOT`
        })
      }
      if (!found.lost) return "kept" as const
      // A lost slot (its WAL removed, past max_slot_wal_keep_size) can never be read again: only its name is
      // reused. The rows it would have delivered are positioned by the scan (docs/operations.md).
      yield* Effect.logWarning(`feed positions: the replication slot ${slot} was lost; making it again`)
      yield* sql`SELECT 1 AS done FROM pg_drop_replication_slot(${slot})`
    }
    return yield* sql`SELECT slot_name FROM pg_create_logical_replication_slot(${slot}, 'pgoutput')`.pipe(
      Effect.as("made" as const),
      Effect.catchIf(
        (error) => sqlState(error) === "42710",
        () => Effect.succeed("kept" as const)
      )
    )
  }).pipe(orDieOnSqlError)

/**
 * Frees the slot for the election's winner: a walsender still streaming it
 * belongs to a holder that lost the election (its instance died, and its
 * walsender has not noticed its client gone yet, or its election connection
 * dropped); it is ended, waiting (on the server) up to 5 s for it to exit,
 * which releases the slot. Subscribing while it is active fails, and a term
 * started again costs a new election round (measured: takeovers of 2.5 to
 * 11 s).
 */
export const takeSlot = (slot: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const ended = yield* sql<{ pid: number; gone: boolean }>`SELECT active_pid AS pid,
        pg_terminate_backend(active_pid, 5000) AS gone
      FROM pg_replication_slots WHERE slot_name = ${slot} AND active_pid IS NOT NULL AND active_pid <> pg_backend_pid()`
    return ended
  }).pipe(orDieOnSqlError)

/** An error's message and its causes' (PostgreSQL's own words are the innermost). */
const messagesOf = (error: unknown): string => {
  const parts: Array<string> = []
  for (let at: unknown = error; typeof at === "object" && at !== null && parts.length < 4; ) {
    if ("message" in at) parts.push(String(at.message))
    at = "cause" in at ? at.cause : undefined
  }
  return parts.length === 0 ? String(error) : parts.join(": ")
}

const decide = Effect.gen(function* () {
  const config = yield* AppConfig
  const database = yield* DatabaseInfo
  const sql = yield* SqlClient.SqlClient
  const slot = config.feedSlot
  const lock = (reason: string) => ({ mode: "lock", slot, reason }) satisfies FeedModeShape
  if (config.feedPositions === "lock") return lock("FEED_POSITIONS=lock")
  const refuse = (why: string) =>
    config.feedPositions === "wal"
      ? Effect.fail(
          new FeedPositionsUnavailable({
            message: `FEED_POSITIONS=wal needs PostgreSQL with logical decoding: ${why}; set FEED_POSITIONS=auto or lock, or configure the server (docs/operations.md, "Feed positions")`
          })
        )
      : Effect.succeed(lock(why))
  if (database.kind === "embedded") return yield* refuse("the embedded PGlite has no logical decoding")
  const level = yield* sql<{ level: string }>`SELECT current_setting('wal_level') AS level`.pipe(Effect.orDie)
  if (level[0]?.level !== "logical") return yield* refuse(`wal_level is ${level[0]?.level ?? "unknown"}, not logical`)
  const made = yield* Effect.exit(ensureSlot(slot))
  if (made._tag === "Failure") {
    const error = Cause.squash(made.cause)
    return yield* refuse(
      error instanceof FeedPositionsUnavailable
        ? error.message
        : `the replication slot ${slot} cannot be made: ${messagesOf(error)}`
    )
  }
  return {
    mode: "wal",
    slot,
    reason: made.value === "made" ? `wal_level=logical, slot ${slot} made` : `wal_level=logical, slot ${slot}`
  } satisfies FeedModeShape
})

/**
 * The feed mode, chosen once at start-up (`FEED_POSITIONS`): `wal` where the
 * database is PostgreSQL with `wal_level=logical` and the slot exists or can
 * be made, else `lock`; `wal` asked for where it cannot be is a start-up
 * failure naming why. Logged once, and shown by `/api/health`.
 */
export class FeedMode extends Context.Service<FeedMode, FeedModeShape>()("FeedMode") {
  static readonly layer = Layer.effect(
    FeedMode,
    Effect.tap(decide, (chosen) =>
      Effect.logInfo(
        chosen.mode === "wal" ? `feed positions: wal (slot ${chosen.slot})` : `feed positions: lock (${chosen.reason})`
      )
    )
  )
}
