import { SqlClient } from "effect/sql"
import { Effect, Schedule } from "effect"
import { orDieOnSqlError } from "../db/orDieOnSqlError"
import type { DecodedCommit } from "./commits"
import type { UnitMessage } from "./unitMessage"
import type { WaitingUnit } from "./positionRows"
import { lockHead, writePositions } from "./positionRows"

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
 * Logical decoding may hand over a commit a moment before the committing
 * session has made it visible (its WAL is flushed first): a unit with no
 * row visible yet is asked for again, every 2 ms, for at most
 * about 5 s. A unit seen with every row positioned was positioned before (a
 * replay after a crash, or the scan after a slot was made): it is skipped.
 * A workspace dropped meanwhile has no table left: its units are skipped.
 */
const visibleUnits = (schema: string, units: ReadonlyArray<UnitMessage>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const exists = yield* sql<{ t: string | null }>`SELECT to_regclass(${`${schema}.audit_entries`})::text AS t`
    if (exists[0]?.t == null) return false
    const ids = units.map((unit) => unit.correlationId)
    const seen = yield* sql<{ correlationId: string }>`SELECT DISTINCT e.correlation_id::text AS "correlationId"
      FROM ${sql(`${schema}.audit_entries`)} AS e WHERE e.correlation_id = ANY(${ids}::uuid[])`
    if (seen.length < new Set(ids).size) return yield* Effect.fail(new NotVisibleYet())
    return true
  }).pipe(
    orDieOnSqlError,
    Effect.retry({
      while: (error) => error instanceof NotVisibleYet,
      schedule: Schedule.spaced("2 millis")
    }),
    Effect.timeoutOrElse({
      duration: "5 seconds",
      orElse: () =>
        Effect.as(
          Effect.logError(`feed positions: units of ${schema} committed but never visible; skipped`, {
            units: units.map((unit) => unit.correlationId)
          }),
          true
        )
    })
  )

/** The waiting rows of `units` (inside the positioning transaction, after `lockHead`), paired with their hashes. */
const waitingRows = (schema: string, units: ReadonlyArray<UnitMessage>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ id: string; correlationId: string; atMicros: string }>`SELECT e.id::text AS id,
        e.correlation_id::text AS "correlationId", (extract(epoch FROM e.at) * 1000000)::bigint::text AS "atMicros"
      FROM ${sql(`${schema}.audit_entries`)} AS e
      WHERE e.correlation_id = ANY(${units.map((unit) => unit.correlationId)}::uuid[]) AND e.position IS NULL
      ORDER BY e.seq`
    const byUnit = new Map<string, Array<(typeof rows)[number]>>()
    for (const row of rows) {
      const list = byUnit.get(row.correlationId) ?? []
      list.push(row)
      byUnit.set(row.correlationId, list)
    }
    const waiting: Array<WaitingUnit> = []
    for (const unit of units) {
      const found = byUnit.get(unit.correlationId) ?? []
      if (found.length === 0) continue
      if (found.length !== unit.contents.length) {
        yield* Effect.logError(
          `feed positions: unit ${unit.correlationId} of ${schema} has ${found.length} rows waiting, its message ${unit.contents.length} hashes; the first ${Math.min(found.length, unit.contents.length)} are positioned`
        )
      }
      const n = Math.min(found.length, unit.contents.length)
      waiting.push({
        correlationId: unit.correlationId,
        rows: found.slice(0, n).map((row, i) => ({
          id: row.id,
          atMicros: BigInt(row.atMicros),
          content: Buffer.from(unit.contents[i] ?? "", "hex")
        }))
      })
    }
    return waiting
  })

/**
 * Positions the rows of a run of decoded commits, in their commit order, in
 * ONE transaction (a batch: one COMMIT for many units), notifying each
 * workspace's id on `positionedChannel` at its COMMIT. Returns the rows
 * positioned. The caller acknowledges the slot only after this succeeded:
 * replayed commits find their rows positioned and pass them.
 */
export const positionCommits = (commits: ReadonlyArray<DecodedCommit>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const byWorkspace = unitsByWorkspace(commits)
    const ready: Array<readonly [string, ReadonlyArray<UnitMessage>]> = []
    for (const [schema, units] of byWorkspace) {
      if (yield* visibleUnits(schema, units)) ready.push([schema, units])
    }
    if (ready.length === 0) return 0
    return yield* sql.withTransaction(
      Effect.gen(function* () {
        let positioned = 0
        for (const [schema, units] of ready) {
          const head = yield* lockHead(schema)
          const waiting = yield* waitingRows(schema, units)
          const n = yield* writePositions(schema, head, waiting)
          if (n > 0) {
            positioned += n
            const workspaceId = units[0]?.workspaceId ?? ""
            yield* sql`SELECT 1 AS done FROM pg_notify(${positionedChannel}, ${workspaceId})`
          }
        }
        return positioned
      })
    )
  }).pipe(Effect.orDie)
