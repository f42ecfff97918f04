import { SqlClient } from "effect/sql"
import { Effect, Schedule } from "effect"
import type { DecodedCommit } from "./commits"
import type { UnitMessage } from "./unitMessage"
import { executeFixed, quotedName } from "../db/fixedStatement"
import { sqlState } from "./FeedMode"
import { lockHead } from "./positionRows"

/** The channel a positioning transaction notifies with each workspace id it positioned rows of (FeedWake listens). */
export const positionedChannel = "abs_feed_positioned"

/** The units of a run of commits, by workspace, each workspace's in commit order. */
export const unitsByWorkspace = (commits: ReadonlyArray<DecodedCommit>) => {
  const byWorkspace = new Map<string, Array<UnitMessage>>()
  for (const commit of commits) {
    for (const unit of commit.units) {
      const units = byWorkspace.get(unit.schema) ?? []
      units.push(unit)
      byWorkspace.set(unit.schema, units)
    }
  }
  return byWorkspace
}

class NotVisibleYet {
  readonly _tag = "NotVisibleYet"
}

/**
 * One statement, its own transaction (autocommit), positions a workspace's
 * units of a batch: it reads their rows, takes the counter, chains the
 * waiting rows after its head (the same bytes as `linkHash`; each step reads
 * its row's time and content hash at its offset, as the lock-mode INSERT
 * does), sets positions and links (`position IS NULL` guard), moves the
 * counter and notifies the workspace's id. When not every unit has a row
 * visible yet it changes nothing (`visible` < `units`). `$1`: the units in
 * commit order, `{c, h, n}` (correlation id, hex hashes, their count); `$2`
 * the channel, `$3` the workspace id.
 *
 * Each unit's rows are found by a lookup of its own on the correlation
 * index (`OFFSET 0` keeps the planner from flattening it into a join). With
 * `= ANY` of the units' ids, a young workspace's table (not analyzed yet)
 * was read whole by every batch: 38 % of the positioner's PostgreSQL CPU
 * under 32 writers (BENCHMARKS.md, "Feed positions from the WAL: the
 * writers' share").
 *
 * Its snapshot is taken before the counter's lock, so it does not wait for
 * it (`nowait`): when someone else holds the counter (a scan, a lock-mode
 * unit, a lost election still finishing a batch) it fails at once
 * (`lock_not_available`), and runs again in a transaction that takes the
 * counter first (`lockHead`), whose next statement's snapshot sees every row
 * positioned before. Should a row still be positioned by someone else in
 * between, the UPDATE's guard passes it, the count differs and the cast of
 * the message fails the statement: nothing of it stays.
 */
export const positionText = (schema: string, nowait: boolean): string => {
  const table = quotedName(`${schema}.audit_entries`)
  const counter = quotedName(`${schema}.feed_position`)
  return `WITH RECURSIVE
    units AS MATERIALIZED (
      SELECT u.ord, u.c, decode(u.h, 'hex') AS hashes, u.n
      FROM ROWS FROM (jsonb_to_recordset($1::jsonb) AS (c uuid, h text, n int)) WITH ORDINALITY AS u(c, h, n, ord)
    ),
    found AS MATERIALIZED (
      SELECT e.id, e.c, e.seq, e.at, e.position FROM units AS u
      CROSS JOIN LATERAL (
        SELECT e.id, e.correlation_id AS c, e.seq, e.at, e.position FROM ${table} AS e
        WHERE e.correlation_id = u.c OFFSET 0
      ) AS e
    ),
    ready AS MATERIALIZED (
      SELECT (SELECT count(DISTINCT c) FROM found)::int AS visible, (SELECT count(*) FROM units)::int AS units
    ),
    head AS MATERIALIZED (
      SELECT position, head FROM ${counter} WHERE (SELECT visible = units FROM ready) FOR UPDATE${nowait ? " NOWAIT" : ""}
    ),
    waiting AS MATERIALIZED (
      SELECT w.id, w.at, w.k, u.hashes, row_number() OVER (ORDER BY u.ord, w.k) AS g
      FROM (SELECT f.id, f.c, f.at, row_number() OVER (PARTITION BY f.c ORDER BY f.seq) AS k
            FROM found AS f WHERE f.position IS NULL) AS w
      JOIN units AS u ON u.c = w.c
      WHERE w.k <= u.n AND EXISTS (SELECT 1 FROM head)
    ),
    packed AS MATERIALIZED (
      SELECT count(*)::bigint AS n,
        array_agg((extract(epoch FROM at) * 1000000)::bigint ORDER BY g) AS ats,
        string_agg(substring(hashes FROM (k - 1)::int * 32 + 1 FOR 32), ''::bytea ORDER BY g) AS contents
      FROM waiting
    ),
    chain(g, position, hash) AS (
      SELECT 0::bigint, head.position, head.head FROM head
      UNION ALL
      SELECT c.g + 1, c.position + 1,
        sha256(decode('05', 'hex') || c.hash || int8send(c.position + 1) || int8send(p.ats[c.g + 1])
          || substring(p.contents FROM c.g::int * 32 + 1 FOR 32))
      FROM chain AS c, packed AS p WHERE c.g < p.n
    ),
    positioned AS (
      UPDATE ${table} AS e SET position = chain.position, hash = chain.hash
      FROM waiting AS w JOIN chain ON chain.g = w.g
      WHERE e.id = w.id AND e.position IS NULL
      RETURNING 1
    ),
    moved AS (
      UPDATE ${counter} SET position = last.position, head = last.hash
      FROM (SELECT chain.position, chain.hash FROM chain, packed WHERE chain.g = packed.n AND packed.n > 0) AS last
      RETURNING 1
    ),
    notified AS (SELECT pg_notify($2, $3) FROM packed WHERE packed.n > 0)
    SELECT ready.visible, ready.units,
      CASE WHEN (SELECT count(*) FROM positioned) = packed.n AND (SELECT count(*) FROM moved) = least(packed.n, 1)
        THEN packed.n::int
        ELSE ('${schema}: ' || packed.n || ' rows to position, ' || (SELECT count(*) FROM positioned)
          || ' still waiting: positioned elsewhere?')::int END AS n,
      (SELECT count(*) FROM units AS u JOIN (SELECT c, count(*) AS n FROM found WHERE position IS NULL GROUP BY c) AS w
        ON w.c = u.c WHERE w.n <> u.n)::int AS mismatched,
      (SELECT count(*) FROM notified)::int AS notified
    FROM ready, packed`
}

interface Positioned {
  readonly visible: number
  readonly units: number
  readonly n: number
  readonly mismatched: number
}

const isPositioned = (row: unknown): row is Positioned =>
  typeof row === "object" && row !== null && "visible" in row && "units" in row && "n" in row && "mismatched" in row

/** A workspace dropped meanwhile has no table left: its statement fails and its units are skipped. */
const tableGone = (schema: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const exists = yield* sql<{ t: string | null }>`SELECT to_regclass(${`${schema}.audit_entries`})::text AS t`
    return exists[0]?.t == null
  }).pipe(Effect.orDie)

/**
 * Positions one workspace's units (`positionText`). Logical decoding may
 * hand over a commit a moment before the committing session has made it
 * visible (its WAL is flushed first; no SQL can wait on another session's
 * transaction): the statement then changes nothing and runs again after 1,
 * 2, 4 ... ms (at most 20 ms apart), for at most about 5 s. A unit seen with
 * every row positioned was positioned before (a replay after a crash, or the
 * scan after a slot was made): it is passed.
 */
const positionWorkspace = (sql: SqlClient.SqlClient, schema: string, units: ReadonlyArray<UnitMessage>) => {
  const workspaceId = units[0]?.workspaceId ?? ""
  const parameters = [
    JSON.stringify(
      units.map((unit) => ({ c: unit.correlationId, h: unit.contents.join(""), n: unit.contents.length }))
    ),
    positionedChannel,
    workspaceId
  ]
  const locked = sql.withTransaction(
    Effect.andThen(lockHead(schema), executeFixed(sql, positionText(schema, false), parameters))
  )
  const once = executeFixed(sql, positionText(schema, true), parameters).pipe(
    Effect.catchIf(
      (error) => sqlState(error) === "55P03",
      () => locked
    ),
    Effect.catch((error) =>
      Effect.flatMap(tableGone(schema), (gone) => (gone ? Effect.succeed(undefined) : Effect.die(error)))
    ),
    Effect.flatMap((rows) => {
      if (rows === undefined) return Effect.succeed(0)
      const row = rows[0]
      if (!isPositioned(row)) return Effect.die(new Error(`${schema}: the positioning statement answered no row`))
      if (row.visible < row.units) return Effect.fail(new NotVisibleYet())
      return row.mismatched > 0
        ? Effect.as(
            Effect.logError(
              `feed positions: ${row.mismatched} units of ${schema} have another number of rows waiting than their message hashes; the first of each are positioned`
            ),
            row.n
          )
        : Effect.succeed(row.n)
    })
  )
  return once.pipe(
    Effect.retry({
      while: (error) => error instanceof NotVisibleYet,
      schedule: Schedule.min([Schedule.exponential("1 millis"), Schedule.spaced("20 millis")])
    }),
    Effect.timeoutOrElse({
      duration: "5 seconds",
      orElse: () =>
        Effect.as(
          Effect.logError(`feed positions: units of ${schema} committed but never visible; skipped`, {
            units: units.map((unit) => unit.correlationId)
          }),
          0
        )
    })
  )
}

/**
 * Positions the rows of a run of decoded commits, in their commit order:
 * one statement per workspace (its own transaction, notifying the
 * workspace's id on `positionedChannel` at its COMMIT). Returns the rows
 * positioned. The caller acknowledges the slot only after this succeeded:
 * replayed commits find their rows positioned and pass them.
 */
export const positionCommits = (commits: ReadonlyArray<DecodedCommit>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    let positioned = 0
    for (const [schema, units] of unitsByWorkspace(commits)) positioned += yield* positionWorkspace(sql, schema, units)
    return positioned
  })
