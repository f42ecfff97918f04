import { isSqlError } from "effect/sql/SqlError"
import type { SqlError } from "effect/sql/SqlError"
import { Cause, Data, Option, Predicate } from "effect"
import { workspaceSchemaPrefix } from "../api/WorkspaceSlug"

/**
 * What went wrong with a statement, as far as a caller can act on it:
 * - `connection`: the database could not be reached or the connection broke.
 *   `retryable` is false when no connection became free in time (the pool is
 *   drained: trying again at once only adds to the queue).
 * - `lock-timeout`: the statement waited `lock_timeout` for a lock another
 *   transaction holds (SQLSTATE 55P03).
 * - `statement-timeout`: the statement ran past `statement_timeout` (57014).
 * - `serialization`: a serialization failure or deadlock (40001, 40P01); the
 *   transaction was rolled back and can simply run again.
 * - `unique-violation`: the write would duplicate a unique key (23505).
 * - `workspace-gone`: the statement named a workspace's schema or table that
 *   no longer exists (3F000, 42P01): the workspace was dropped after the
 *   request or job resolved it (docs/decisions.md, "Dropping a workspace").
 * - `bug`: anything else: a wrong statement, a broken invariant.
 */
export type DatabaseFaultKind =
  | { readonly kind: "connection"; readonly retryable: boolean }
  | { readonly kind: "lock-timeout" }
  | { readonly kind: "statement-timeout" }
  | { readonly kind: "serialization" }
  | { readonly kind: "unique-violation" }
  | { readonly kind: "workspace-gone" }
  | { readonly kind: "bug" }

/**
 * A unit's COMMIT was sent and its connection broke before the answer came:
 * the transaction may or may not have committed. Never retried.
 */
export class CommitOutcomeUnknown extends Data.TaggedError("CommitOutcomeUnknown")<{
  readonly cause: unknown
}> {}

/** A database fault found in a failure's cause: what it is, and the error it came from. */
export type DatabaseFault =
  | (DatabaseFaultKind & { readonly error: SqlError })
  | { readonly kind: "commit-outcome-unknown"; readonly error: CommitOutcomeUnknown }

/** SQLSTATE classes and codes that mean the server or the connection, not the statement. */
const connectionCodes = new Set([
  "57P01", // admin_shutdown: the backend was terminated
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now: starting up or shutting down
  "53300" // too_many_connections
])
const connectionClasses = ["08", "53", "58"] // connection exception, insufficient resources, system error

/** Node socket errors (the `code` of the error the driver passes on). */
const socketCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN"
])

/**
 * What the driver says when a connection is lost, cannot be made, or cannot
 * be had in time: `pg` and `pg-pool` (kept for errors made by them), and the
 * wire-protocol driver of `@effect/sql-pg` 4, which also sorts its own errors
 * (a `ConnectionError` reason, below).
 */
const lostConnectionMessages = [
  "Connection terminated",
  "connection error and is not queryable",
  "Client was closed and is not queryable",
  "Connection timed out",
  "Connection closed",
  "Connection is closed"
]
/** pg-pool's message, kept by `Database.ts` for a pool that lends no connection within the acquire timeout. */
export const acquireTimeoutMessage = "timeout exceeded when trying to connect"

/** SQLSTATEs of a statement naming a schema or table that does not exist: invalid_schema_name, undefined_table. */
const missingObjectCodes = new Set(["3F000", "42P01"])

/** The driver's message quotes the missing name (`relation "ws_acme.records" does not exist`): a workspace's, or not. */
const namesWorkspaceSchema = (message: string) => message.includes(`"${workspaceSchemaPrefix}`)

const codeOf = (error: unknown): string | undefined =>
  Predicate.hasProperty(error, "code") && typeof error.code === "string" ? error.code : undefined

const messageOf = (error: unknown): string =>
  Predicate.hasProperty(error, "message") && typeof error.message === "string" ? error.message : ""

/**
 * The driver's error under a SqlError (in effect 4 under its `reason`), and the
 * errors it wraps (an AggregateError of refused addresses).
 */
const driverErrors = (error: SqlError): ReadonlyArray<unknown> => {
  const cause = error.reason.cause
  const nested = Predicate.hasProperty(cause, "errors") && Array.isArray(cause.errors) ? cause.errors : []
  return [cause, ...nested]
}

/** Sorts a SqlError into the fault kinds above by its SQLSTATE, its socket error code or the driver's message. */
export const classifySqlError = (error: SqlError): DatabaseFaultKind => {
  const causes = driverErrors(error)
  const codes = causes.map(codeOf).filter(Predicate.isNotUndefined)
  const messages = causes.map(messageOf)
  if (messages.some((message) => message.includes(acquireTimeoutMessage)))
    return { kind: "connection", retryable: false }
  for (const code of codes) {
    if (code === "55P03") return { kind: "lock-timeout" }
    if (code === "57014") return { kind: "statement-timeout" }
    if (code === "40001" || code === "40P01") return { kind: "serialization" }
    if (code === "23505") return { kind: "unique-violation" }
    if (missingObjectCodes.has(code) && messages.some(namesWorkspaceSchema)) return { kind: "workspace-gone" }
    if (connectionCodes.has(code) || socketCodes.has(code) || connectionClasses.includes(code.slice(0, 2))) {
      return { kind: "connection", retryable: true }
    }
  }
  // The driver's own sorting, for errors without a SQLSTATE (a socket closed under a statement).
  if (error.reason._tag === "ConnectionError") return { kind: "connection", retryable: true }
  if (messages.some((message) => lostConnectionMessages.some((lost) => message.includes(lost)))) {
    return { kind: "connection", retryable: true }
  }
  return { kind: "bug" }
}

/**
 * The statement lost to other transactions rather than failed: a deadlock or
 * serialization failure, a lock wait past `lock_timeout`, or a cancelled
 * statement (57014: a statement timeout, or a cancel meant for an interrupted
 * query that landed on this pooled connection late). Worth another try for
 * work that takes strong locks and may meet anyone (dropping a schema).
 */
export const isContention = (error: SqlError): boolean => {
  const { kind } = classifySqlError(error)
  return kind === "serialization" || kind === "lock-timeout" || kind === "statement-timeout"
}

const isCommitOutcomeUnknown = (value: unknown): value is CommitOutcomeUnknown =>
  Predicate.isTagged(value, "CommitOutcomeUnknown")

/**
 * The database fault behind a failure, whether it failed with a SqlError or
 * died with one (most repositories turn SqlError into a defect; a failed
 * ROLLBACK is always one, a failed COMMIT is a failure in effect 4). A lost
 * COMMIT wins over anything else.
 */
export const databaseFaultOf = (cause: Cause.Cause<unknown>): Option.Option<DatabaseFault> => {
  const errors = cause.reasons.flatMap((reason) =>
    Cause.isFailReason(reason) ? [reason.error] : Cause.isDieReason(reason) ? [reason.defect] : []
  )
  const unknownCommit = errors.find(isCommitOutcomeUnknown)
  if (unknownCommit !== undefined) return Option.some({ kind: "commit-outcome-unknown", error: unknownCommit })
  const sqlError = errors.find(isSqlError)
  return sqlError === undefined ? Option.none() : Option.some({ ...classifySqlError(sqlError), error: sqlError })
}

/** Whether a failure is a statement on a workspace that was dropped meanwhile (see `workspace-gone`). */
export const isWorkspaceGone = (cause: Cause.Cause<unknown>): boolean =>
  Option.exists(databaseFaultOf(cause), (fault) => fault.kind === "workspace-gone")
