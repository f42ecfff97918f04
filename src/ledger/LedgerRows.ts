import { SqlClient } from "effect/sql"
import { Effect, Fiber } from "effect"
import type { Workspace } from "../api/Workspace"
import { MissingSalt } from "../chain/commitments"
import type { RowSalts } from "../chain/rowHash"
import { contentHash } from "../chain/rowHash"
import type { StoredLedgerRow } from "../chain/storedRow"
import { ledgerRowColumns, ledgerRowOf } from "../chain/storedRow"
import type { ChainRow } from "../chain/verifyChain"

/** An audit row with what its place in the chain takes: its salts and stored hash, hex-encoded. */
export interface StoredChainRow extends StoredLedgerRow {
  readonly salt: string | null
  readonly erasedSalts: Record<string, string> | null
  readonly hash: string | null
}

/** The salts a row's values are committed with: its root salt, or the salts published when a value was erased. */
export const saltsOf = (row: Pick<StoredChainRow, "salt" | "erasedSalts">): RowSalts => ({
  salt: row.salt === null ? null : Buffer.from(row.salt, "hex"),
  published: new Map(Object.entries(row.erasedSalts ?? {}).map(([pointer, hex]) => [pointer, Buffer.from(hex, "hex")]))
})

/** The row as the chain verifier takes it: its content hash recomputed now (null when a value has no salt left). */
export const chainRowOf = (row: StoredChainRow): ChainRow => {
  let content: Uint8Array | null
  try {
    content = contentHash(ledgerRowOf(row), saltsOf(row))
  } catch (error) {
    if (!(error instanceof MissingSalt)) throw error
    content = null
  }
  return {
    position: BigInt(row.position),
    atMicros: BigInt(row.atMicros),
    order: BigInt(row.seq),
    stored: row.hash === null ? null : Buffer.from(row.hash, "hex"),
    content
  }
}

/** The workspace's counter: the last position handed out, the chain's head, where the gapless part begins. */
export interface LedgerHead {
  readonly position: string
  readonly hash: string
  readonly chainedFrom: string
}

export const readHead = (workspace: Workspace) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<LedgerHead>`SELECT position::text AS position, encode(head, 'hex') AS hash, chained_from::text AS "chainedFrom"
      FROM ${sql(workspace.table("feed_position"))}`.pipe(
      Effect.map((rows) => rows[0]),
      Effect.flatMap(Effect.fromNullishOr),
      Effect.orDie
    )
  )

/**
 * Every audit row of a workspace in feed order, `batch` rows at a time (the
 * memory it takes: two batches), each batch handed to `each` before the
 * next is read. The next batch is asked for before `each` runs, so the
 * database reads it while this process works on the one before.
 */
export const eachLedgerBatch = <E, R>(
  workspace: Workspace,
  batch: number,
  each: (rows: ReadonlyArray<StoredChainRow>) => Effect.Effect<boolean, E, R>
) =>
  Effect.gen(function* () {
    // The columns are named as they are read: the client's renaming of every row's keys would change none.
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const columns = sql.literal(`${ledgerRowColumns}, encode(e.salt, 'hex') AS salt, e.erased_salts AS "erasedSalts",
      encode(e.hash, 'hex') AS hash`)
    const read = (after: string) =>
      Effect.forkChild(
        sql<StoredChainRow>`SELECT ${columns} FROM ${sql(workspace.table("audit_entries"))} AS e
          WHERE e.position > ${after}::bigint ORDER BY e.position LIMIT ${batch}`.pipe(Effect.orDie),
        { startImmediately: true }
      )
    let next: Fiber.Fiber<ReadonlyArray<StoredChainRow>> | undefined = yield* read("0")
    while (next !== undefined) {
      const rows: ReadonlyArray<StoredChainRow> = yield* Fiber.join(next)
      const last = rows[rows.length - 1]
      // A short batch is the last one: nothing more to ask for.
      next = last !== undefined && rows.length === batch ? yield* read(last.position) : undefined
      if (rows.length === 0 || !(yield* each(rows))) break
    }
    if (next !== undefined) yield* Fiber.interrupt(next)
  })
