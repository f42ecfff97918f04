import { SqlClient } from "effect/sql"
import { Effect } from "effect"
import { linkHash } from "../chain/rowHash"
import { quotedName } from "../db/fixedStatement"

/** One unit's rows waiting for positions, in the order they go: their ids and times, with their content hashes. */
export interface WaitingUnit {
  readonly correlationId: string
  readonly rows: ReadonlyArray<{ readonly id: string; readonly atMicros: bigint; readonly content: Uint8Array }>
}

export interface Head {
  readonly position: bigint
  readonly hash: Buffer
}

/** The links of `units`' rows after `head`, in order: the same bytes as the lock-mode INSERT's chain. */
export const chainAfter = (head: Head, units: ReadonlyArray<WaitingUnit>) => {
  let position = head.position
  let hash = head.hash
  const rows: Array<{ readonly id: string; readonly position: string; readonly hash: string }> = []
  for (const unit of units) {
    for (const row of unit.rows) {
      position += 1n
      hash = linkHash(hash, position, row.atMicros, row.content)
      rows.push({ id: row.id, position: position.toString(), hash: hash.toString("hex") })
    }
  }
  return { rows, head: { position, hash } satisfies Head }
}

/**
 * Takes the workspace's counter row for the rest of the transaction and
 * reads its head. Its own statement: every statement after it takes its
 * snapshot once the lock is held, so it sees every row positioned by
 * whoever held the lock before (a positioner, a scan, a lock-mode unit).
 */
export const lockHead = (schema: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ position: string; head: string }>`SELECT position::text AS position,
        encode(head, 'hex') AS head FROM ${sql(`${schema}.feed_position`)} FOR UPDATE`
    const row = rows[0]
    if (row === undefined) return yield* Effect.die(new Error(`${schema}.feed_position has no row`))
    return { position: BigInt(row.position), hash: Buffer.from(row.head, "hex") } satisfies Head
  }).pipe(Effect.orDie)

/**
 * Gives `units`' rows (all of them waiting) the positions after `head` and
 * their links, and moves the counter to the last: one statement, inside the
 * transaction that holds the counter (`lockHead`). Only rows still without a
 * position are set; a row positioned meanwhile would leave the counter
 * ahead of the rows, so that dies (the transaction rolls back) rather than
 * leave a gap.
 */
export const writePositions = (schema: string, head: Head, units: ReadonlyArray<WaitingUnit>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const chained = chainAfter(head, units)
    if (chained.rows.length === 0) return 0
    const table = quotedName(`${schema}.audit_entries`)
    const counter = quotedName(`${schema}.feed_position`)
    const set = yield* sql.unsafe<{ n: number }>(
      `WITH moved AS (
          UPDATE ${counter} SET position = $2::bigint, head = decode($3, 'hex') RETURNING 1
        ), positioned AS (
          UPDATE ${table} AS e SET position = c.position, hash = decode(c.hash, 'hex')
          FROM jsonb_to_recordset($1::jsonb) AS c(id uuid, position bigint, hash text)
          WHERE e.id = c.id AND e.position IS NULL
          RETURNING 1
        )
        SELECT (SELECT count(*) FROM positioned)::int AS n, (SELECT count(*) FROM moved)::int AS moved`,
      [JSON.stringify(chained.rows), chained.head.position.toString(), chained.head.hash.toString("hex")]
    )
    const n = set[0]?.n ?? 0
    if (n !== chained.rows.length) {
      return yield* Effect.die(
        new Error(`${schema}: ${chained.rows.length} rows to position, ${n} still waiting: positioned elsewhere?`)
      )
    }
    return n
  }).pipe(Effect.orDie)
