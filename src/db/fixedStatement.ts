import type { SqlClient } from "effect/sql"
import { Statement } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import { Effect, Option } from "effect"
import { withSpanIfTracing } from "../context/withSpanIfTracing"

/** A qualified name quoted as `sql(...)` quotes it: `"ws_acme"."records"`. */
export const quotedName = Statement.defaultEscape('"')

/**
 * A statement of the write path whose text is written out in full (`$1`
 * placeholders, identifiers quoted with `quotedName`, result columns aliased
 * to their camelCase names): inside a transaction it goes straight to the
 * transaction's connection and its rows come as the driver gives them.
 *
 * Why: a tagged-template statement of `@effect/sql` is compiled again on every
 * run (segments to text, every identifier through `camelToSnake`), opens and
 * closes a `Scope` to borrow the connection it already holds, and renames
 * every column of every row through `snakeToCamel`; on the few statements of
 * a single-record unit that was about 100 µs of CPU per statement with
 * Effect 3 (bench/NOTES.md; whether Effect 4 still needs this is measured
 * separately). While tracing is on the statement is still one
 * `sql.execute` span under the unit, with the same attributes; it fails with
 * the same `SqlError`.
 * Outside a transaction it runs on `sql` (without its name transforms).
 */
export const executeFixed = (
  sql: SqlClient.SqlClient,
  text: string,
  params: ReadonlyArray<unknown>
): Effect.Effect<ReadonlyArray<unknown>, SqlError> =>
  Effect.flatMap(
    Effect.serviceOption(sql.transactionService),
    (transaction): Effect.Effect<ReadonlyArray<unknown>, SqlError> =>
      Option.isSome(transaction)
        ? transaction.value[0].execute(text, params, undefined)
        : sql.withoutTransforms().unsafe(text, params)
  ).pipe(
    withSpanIfTracing("sql.execute", {
      kind: "client",
      captureStackTrace: false,
      attributes: { "db.system.name": "postgresql", "db.operation.name": "execute", "db.query.text": text }
    })
  )
