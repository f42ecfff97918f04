import { Context, Effect, Layer, Schema } from "effect"
import type { Workspace } from "../api/Workspace"
import { AuditEntry } from "../api/AuditEntry"
import { FeedEntry, FeedPage } from "../api/Feed"
import { ReadSqlClient } from "../db/Database"
import { encodeFeedCursor } from "./FeedCursor"
import type { FeedPosition } from "./FeedCursor"
import { entryJson, ledgerEntryJson } from "./entryJson"
import { pageOfWindow } from "./feedWindow"
import { fromJsonText } from "../json/fromJsonText"

/** Which rows a feed request keeps; every filter given must hold. */
export interface FeedFilter {
  /** Business objects the caller may read: all of them, or these (none: the caller sees no row). */
  readonly readable: "all" | ReadonlyArray<string>
  readonly businessObject?: string | undefined
  readonly record?: string | undefined
  readonly actor?: string | undefined
  readonly correlationId?: string | undefined
  readonly from?: string | undefined
  readonly to?: string | undefined
}

/**
 * What each row of a batch is built as: the entry (AuditEntry, what readers get), or the entry with its
 * ledger fields (LedgerFeedEntry, the admin export's, for an auditor).
 */
export type FeedShape = "entry" | "ledger"

/** A row as the feed query returns it: its position and the entry as JSON text, built by PostgreSQL. */
export interface FeedRow {
  readonly position: bigint
  readonly json: string
}

/** One query's page: rows, where the next one starts, and whether more rows exist already. */
export interface FeedBatch {
  readonly rows: ReadonlyArray<FeedRow>
  readonly next: FeedPosition
  readonly more: boolean
}

/** A date alone is UTC midnight (PostgreSQL would read it in the session's time zone); a date-time names its offset. */
const utc = (instant: string) => (instant.length === 10 ? `${instant}T00:00:00Z` : instant)

/** Rows a filtered request scans at most: bounded work per request however rare the matches. */
export const scanWindow = 5_000

interface Scanned {
  readonly last: string | null
  readonly scanned: number
  readonly position: string | null
  readonly json: string | null
}

/** Rows a page scans: unfiltered, every scanned row is kept, so scanning more than the page would be waste. */
const windowOf = (clauses: ReadonlyArray<unknown>, limit: number) =>
  clauses.length === 0 ? limit + 1 : Math.max(scanWindow, limit + 1)

/** The matched rows of a window's answer (its first row carries the window's figures even when nothing matched). */
const matchedRows = (rows: ReadonlyArray<Scanned>): Array<FeedRow> => {
  const matched: Array<FeedRow> = []
  for (const row of rows) {
    if (row.position !== null && row.json !== null) matched.push({ position: BigInt(row.position), json: row.json })
  }
  return matched
}

/** The entry as one line of JSON (NDJSON export): the row's text with its cursor added, never parsed. */
export const feedLine = (row: FeedRow) =>
  `${row.json.slice(0, -1)},"cursor":"${encodeFeedCursor({ position: row.position })}"}\n`

const decodeEntry = Schema.decodeUnknownEffect(fromJsonText(AuditEntry))

const make = Effect.gen(function* () {
  const sql = yield* ReadSqlClient

  const conditions = (filter: FeedFilter) => {
    const clauses = []
    if (filter.readable !== "all") {
      clauses.push(filter.readable.length === 0 ? sql.literal("false") : sql.in("s.business_object", filter.readable))
    }
    if (filter.businessObject !== undefined) clauses.push(sql`s.business_object = ${filter.businessObject}`)
    if (filter.record !== undefined) clauses.push(sql`s.business_object_id = ${filter.record}`)
    if (filter.actor !== undefined) {
      // An actor is named by its id; a system actor (a seeder, a workflow) has none and is named by its name.
      clauses.push(
        sql`coalesce(s.actor->>'id', CASE WHEN s.actor->>'kind' = 'system' THEN s.actor->>'name' END) = ${filter.actor}`
      )
    }
    if (filter.correlationId !== undefined) clauses.push(sql`s.correlation_id = ${filter.correlationId}::uuid`)
    if (filter.from !== undefined) clauses.push(sql`s.at >= ${utc(filter.from)}::timestamptz`)
    if (filter.to !== undefined) clauses.push(sql`s.at < ${utc(filter.to)}::timestamptz`)
    return clauses
  }

  const entryText = { entry: entryJson(sql), ledger: ledgerEntryJson(sql) } satisfies Record<FeedShape, unknown>

  /** One statement: the window after `after`, its matches (at most `limit + 1`) as JSON text of `shape`. */
  const batch = (
    workspace: Workspace,
    after: FeedPosition,
    filter: FeedFilter,
    limit: number,
    shape: FeedShape = "entry"
  ) =>
    Effect.gen(function* () {
      const clauses = conditions(filter)
      const window = windowOf(clauses, limit)
      const table = sql(workspace.table("audit_entries"))
      const rows = yield* sql<Scanned>`
        WITH scanned AS MATERIALIZED (
          SELECT e.position, e.business_object, e.business_object_id, e.actor, e.correlation_id, e.at
          FROM ${table} AS e
          WHERE e.position > ${after.position.toString()}::bigint
          ORDER BY e.position
          LIMIT ${window}
        ), matched AS (
          SELECT s.position FROM scanned AS s WHERE ${sql.and(clauses)} ORDER BY s.position LIMIT ${limit + 1}
        )
        SELECT b.last::text AS last, b.scanned, x.position::text AS position, x.json
        FROM (SELECT max(position) AS last, count(*)::int AS scanned FROM scanned) AS b
        LEFT JOIN LATERAL (
          SELECT e.position, ${entryText[shape]} AS json
          FROM ${table} AS e
          -- A lookup of each kept position on the index (a join here may hash the whole table).
          WHERE e.position = ANY (ARRAY(SELECT position FROM matched))
        ) AS x ON true
        ORDER BY x.position`
      const first = rows[0]
      const matched = matchedRows(rows)
      const page = pageOfWindow({
        after: after.position,
        limit,
        scanned: first?.scanned ?? 0,
        lastScanned: first?.last == null ? null : BigInt(first.last),
        windowFull: (first?.scanned ?? 0) >= window,
        matched,
        positionOf: (row) => row.position
      })
      return { rows: page.rows, next: { position: page.next }, more: page.more } satisfies FeedBatch
    }).pipe(Effect.orDie)

  /**
   * One statement, backwards: the window of rows before `before` (none: the
   * head), newest first, its matches (at most `limit + 1`), and the feed's
   * head in the same snapshot. `next` is the lowest position scanned (the
   * next page's `before`); `more`: older rows may match.
   */
  const batchBefore = (workspace: Workspace, before: FeedPosition | undefined, filter: FeedFilter, limit: number) =>
    Effect.gen(function* () {
      const clauses = conditions(filter)
      const window = windowOf(clauses, limit)
      const table = sql(workspace.table("audit_entries"))
      const below = before === undefined ? sql.literal("true") : sql`e.position < ${before.position.toString()}::bigint`
      const rows = yield* sql<Scanned & { readonly head: string }>`
        WITH scanned AS MATERIALIZED (
          SELECT e.position, e.business_object, e.business_object_id, e.actor, e.correlation_id, e.at
          FROM ${table} AS e
          WHERE ${below}
          ORDER BY e.position DESC
          LIMIT ${window}
        ), matched AS (
          SELECT s.position FROM scanned AS s WHERE ${sql.and(clauses)} ORDER BY s.position DESC LIMIT ${limit + 1}
        )
        SELECT b.last::text AS last, b.scanned, h.head::text AS head, x.position::text AS position, x.json
        FROM (SELECT min(position) AS last, count(*)::int AS scanned FROM scanned) AS b
        CROSS JOIN (SELECT coalesce(max(position), 0) AS head FROM ${table}) AS h
        LEFT JOIN LATERAL (
          SELECT e.position, ${entryText.entry} AS json
          FROM ${table} AS e
          WHERE e.position = ANY (ARRAY(SELECT position FROM matched))
        ) AS x ON true
        ORDER BY x.position DESC`
      const first = rows[0]
      const matched = matchedRows(rows)
      const head = BigInt(first?.head ?? "0")
      // Past the whole window the scan reached the feed's start: nothing older is left.
      const page = pageOfWindow({
        after: before?.position ?? head + 1n,
        limit,
        scanned: first?.scanned ?? 0,
        lastScanned: first?.last == null ? null : BigInt(first.last),
        windowFull: (first?.scanned ?? 0) >= window,
        matched,
        positionOf: (row) => row.position
      })
      return { rows: page.rows, next: { position: page.next }, more: page.more, head: { position: head } }
    }).pipe(Effect.orDie)

  /** A page as the JSON answer: each row decoded into its wire shape, with its cursor. */
  const toPage = (result: FeedBatch & { readonly head?: FeedPosition }) =>
    Effect.gen(function* () {
      const entries = yield* Effect.forEach(result.rows, (row) =>
        Effect.map(
          decodeEntry(row.json),
          (entry) => new FeedEntry({ ...entry, cursor: encodeFeedCursor({ position: row.position }) })
        )
      )
      return new FeedPage({
        entries,
        nextCursor: encodeFeedCursor(result.next),
        more: result.more,
        ...(result.head === undefined ? {} : { head: encodeFeedCursor(result.head) })
      })
    }).pipe(Effect.orDie)

  /** A page newest first, before `before` (none: from the head), with the head to follow from. */
  const page = (workspace: Workspace, after: FeedPosition, filter: FeedFilter, limit: number) =>
    Effect.flatMap(batch(workspace, after, filter, limit), toPage)

  /** How many rows follow `after`: an index-only count, for an export's progress. */
  const countAfter = (workspace: Workspace, after: FeedPosition) =>
    Effect.map(
      sql<{ readonly n: string }>`SELECT count(*)::text AS n FROM ${sql(workspace.table("audit_entries"))}
        WHERE position > ${after.position.toString()}::bigint`,
      (rows) => Number(rows[0]?.n ?? "0")
    ).pipe(Effect.orDie)

  return { batch, batchBefore, page, toPage, countAfter } as const
})

/**
 * The workspace change feed (docs/feed.md): audit rows in `position` order,
 * which is the workspace's commit order. A request scans at most a window of
 * rows after its cursor on the `audit_entries_feed` index and keeps those
 * its filters and the caller's permissions let through; the rows, the
 * window's end and its size come from one statement, so from one snapshot.
 */
export class Feed extends Context.Service<Feed, Effect.Success<typeof make>>()("Feed") {
  static readonly layer = Layer.effect(Feed, make)
}
