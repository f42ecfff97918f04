import { SqlClient } from "effect/sql"
import { Context, Duration, Effect, Layer, Metric, Ref, Schedule } from "effect"
import { schemaNameOf } from "../api/WorkspaceSlug"
import { quotedName } from "../db/fixedStatement"
import { feedSlotLagBytes, feedUnpositionedRows } from "../metrics/ServiceMetrics"
import { FeedMode } from "./FeedMode"
import type { FeedModeName } from "./FeedMode"
import { Positioner } from "./Positioner"

/** The feed's part of `/api/health` (src/api/HealthApi.ts `FeedHealth`). */
export interface FeedHealthShape {
  readonly mode: FeedModeName
  readonly slot: string | null
  readonly holder: boolean
  readonly slotLagBytes: number | null
  readonly unpositionedRows: number | null
  readonly delayMs: number | null
}

/** How often WAL mode reads the slot's lag and the waiting rows (for the gauges and health). */
export const hygieneInterval = Duration.seconds(2)

/** The WAL the slot keeps (none: the slot is gone) and the rows waiting for positions, all workspaces. */
const measure = (slot: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const lag = yield* sql<{ bytes: string | null }>`SELECT
        pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::bigint::text AS bytes
      FROM pg_replication_slots WHERE slot_name = ${slot}`
    const platform = yield* sql<{ t: string | null }>`SELECT to_regclass('platform.workspaces')::text AS t`
    const workspaces =
      platform[0]?.t == null ? [] : yield* sql<{ slug: string }>`SELECT slug FROM platform.workspaces ORDER BY slug`
    let waiting = 0
    // A statement per 200 workspaces: each count reads the partial index of waiting rows only.
    for (let at = 0; at < workspaces.length; at += 200) {
      const counts = workspaces
        .slice(at, at + 200)
        .map(
          (w) =>
            `SELECT count(*) AS n FROM ${quotedName(`${schemaNameOf(w.slug)}.audit_entries`)} WHERE position IS NULL`
        )
      const rows = yield* sql.unsafe<{ n: string }>(
        `SELECT coalesce(sum(n), 0)::text AS n FROM (${counts.join(" UNION ALL ")}) c`
      )
      waiting += Number(rows[0]?.n ?? "0")
    }
    const bytes = lag[0]?.bytes
    return { slotLagBytes: bytes == null ? null : Number(bytes), unpositionedRows: waiting }
  })

const make = Effect.gen(function* () {
  const feed = yield* FeedMode
  const positioner = yield* Positioner
  const sql = yield* SqlClient.SqlClient
  const measured = yield* Ref.make<{ slotLagBytes: number | null; unpositionedRows: number | null }>({
    slotLagBytes: null,
    unpositionedRows: null
  })
  if (feed.mode === "wal") {
    yield* measure(feed.slot).pipe(
      Effect.tap((m) =>
        Effect.andThen(
          Ref.set(measured, m),
          Effect.andThen(
            Metric.update(feedUnpositionedRows, m.unpositionedRows),
            m.slotLagBytes === null ? Effect.void : Metric.update(feedSlotLagBytes, m.slotLagBytes)
          )
        )
      ),
      // A workspace being made or dropped, a fresh database not migrated yet: measured again next time.
      Effect.ignore,
      Effect.repeat(Schedule.spaced(hygieneInterval)),
      Effect.provideService(SqlClient.SqlClient, sql),
      Effect.forkScoped
    )
  }
  const health = Effect.gen(function* () {
    const m = yield* Ref.get(measured)
    const state = yield* positioner.state
    return {
      mode: feed.mode,
      slot: feed.mode === "wal" ? feed.slot : null,
      holder: state.holder,
      slotLagBytes: m.slotLagBytes,
      unpositionedRows: m.unpositionedRows,
      delayMs: state.delayMs
    } satisfies FeedHealthShape
  })
  return { health } as const
})

/**
 * The feed's mode and, in WAL mode, its slot's lag (WAL retained, bytes), the
 * rows waiting for positions and the last positioning delay: measured every
 * 2 s into the `feed_*` gauges, and read by `/api/health` at no cost.
 */
export class FeedHealth extends Context.Service<FeedHealth, Effect.Success<typeof make>>()("FeedHealth") {
  static readonly layer = Layer.effect(FeedHealth, make)
}
