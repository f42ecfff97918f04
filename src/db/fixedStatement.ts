import type { SqlClient } from "effect/sql"
import { Statement } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import { Effect, Option } from "effect"
import { withSpanIfTracing } from "../context/withSpanIfTracing"

/** A qualified name quoted as `sql(...)` quotes it: `"ws_acme"."records"`. */
export const quotedName = Statement.defaultEscape('"')

type SpanAttributes = ReadonlyArray<readonly [string, unknown]>

const isSpanAttributes = (value: unknown): value is SpanAttributes =>
  Array.isArray(value) &&
  value.every((entry) => Array.isArray(entry) && entry.length === 2 && typeof entry[0] === "string")

const spanOptions = new WeakMap<SqlClient.SqlClient, { readonly name: string; readonly attributes: SpanAttributes }>()

/**
 * The name and attributes `@effect/sql` gives the statements of `sql`
 * (`Statement.spanName` of the client's span attributes: the database's name),
 * read once from a statement of the client's own, so that a fixed statement's
 * span is named and described as the library's are (docs/operations.md, "Traces").
 */
const spanOptionsOf = (sql: SqlClient.SqlClient) => {
  const known = spanOptions.get(sql)
  if (known !== undefined) return known
  const statement = sql.unsafe("")
  const attributes =
    "spanAttributes" in statement && isSpanAttributes(statement.spanAttributes) ? statement.spanAttributes : []
  const options = { name: Statement.spanName(attributes), attributes }
  spanOptions.set(sql, options)
  return options
}

/**
 * A statement of the write path whose text is written out in full (`$1`
 * placeholders, identifiers quoted with `quotedName`, result columns aliased
 * to their camelCase names): inside a transaction it goes straight to the
 * transaction's connection and its rows come as the driver gives them.
 *
 * Why: a tagged-template statement of `@effect/sql` is compiled again on every
 * run (segments to text, every identifier through `camelToSnake`) and renames
 * every column of every row through `snakeToCamel`. Measured again on Effect 4
 * (docs/decisions.md, "Hand-sent write statements"): the PATCH path is still
 * cheaper this way, and the stack misses its targets either way, so it stays.
 * While tracing is on the statement is still one span under the unit, named
 * and attributed as `@effect/sql`'s own statement spans; it fails with the
 * same `SqlError`. Outside a transaction it runs on `sql` (without its name
 * transforms).
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
  ).pipe((statement) => {
    const span = spanOptionsOf(sql)
    return withSpanIfTracing(span.name, {
      kind: "client",
      captureStackTrace: false,
      attributes: {
        ...Object.fromEntries(span.attributes),
        "db.operation.name": "execute",
        "effect.sql.method": "execute",
        "db.query.text": text
      }
    })(statement)
  })
