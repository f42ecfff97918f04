import {
  ConnectionError,
  ConstraintError,
  DeadlockError,
  LockTimeoutError,
  SerializationError,
  SqlError,
  type SqlErrorReason,
  SqlSyntaxError,
  StatementTimeoutError,
  UniqueViolation,
  UnknownError
} from "effect/sql/SqlError"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Option, Predicate } from "effect"
import {
  acquireTimeoutMessage,
  classifySqlError,
  CommitOutcomeUnknown,
  databaseFaultOf
} from "../../src/db/DatabaseFault"
import type { DatabaseFaultKind } from "../../src/db/DatabaseFault"

/** What the driver hands over: a server error with its SQLSTATE, a socket error, or a bare message. */
const driverError = (message: string, code?: string) =>
  Object.assign(new Error(message), code === undefined ? {} : { code })

/**
 * The reason a driver error arrives in: @effect/sql-pg's SQLSTATE mapping, a
 * socket error is a ConnectionError, a bare message an UnknownError; a pool
 * that lends no connection in time is a ConnectionError (src/db/Database.ts).
 * The driver's error stays the reason's cause.
 */
const reasonOf = (cause: unknown): SqlErrorReason => {
  const props = { cause, message: "PgConnection: Query failed", operation: "query" }
  const code = Predicate.hasProperty(cause, "code") && typeof cause.code === "string" ? cause.code : undefined
  const acquireTimedOut = cause instanceof Error && cause.message === acquireTimeoutMessage
  if (cause instanceof AggregateError || acquireTimedOut || code?.startsWith("E") || code?.startsWith("08")) {
    return new ConnectionError(props)
  }
  if (code === "23505") return new UniqueViolation({ ...props, constraint: "unknown" })
  if (code?.startsWith("23")) return new ConstraintError(props)
  if (code?.startsWith("42")) return new SqlSyntaxError(props)
  if (code === "40P01") return new DeadlockError(props)
  if (code === "40001") return new SerializationError(props)
  if (code === "55P03") return new LockTimeoutError(props)
  if (code === "57014") return new StatementTimeoutError(props)
  return new UnknownError(props)
}
const sqlError = (cause: unknown) => new SqlError({ reason: reasonOf(cause) })

const connection: DatabaseFaultKind = { kind: "connection", retryable: true }

const table: ReadonlyArray<readonly [string, unknown, DatabaseFaultKind]> = [
  [
    "backend terminated (57P01)",
    driverError("terminating connection due to administrator command", "57P01"),
    connection
  ],
  [
    "crash shutdown (57P02)",
    driverError("terminating connection because of crash of another server process", "57P02"),
    connection
  ],
  ["cannot connect now (57P03)", driverError("the database system is starting up", "57P03"), connection],
  ["too many connections (53300)", driverError("sorry, too many clients already", "53300"), connection],
  ["connection failure (08006)", driverError("connection failure", "08006"), connection],
  ["unable to connect (08001)", driverError("could not connect", "08001"), connection],
  ["refused", driverError("connect ECONNREFUSED 127.0.0.1:5432", "ECONNREFUSED"), connection],
  ["reset", driverError("read ECONNRESET", "ECONNRESET"), connection],
  ["broken pipe", driverError("write EPIPE", "EPIPE"), connection],
  ["timed out", driverError("connect ETIMEDOUT", "ETIMEDOUT"), connection],
  [
    "refused on every address",
    Object.assign(new AggregateError([driverError("connect ECONNREFUSED ::1:5432", "ECONNREFUSED")]), {}),
    connection
  ],
  ["connection terminated", driverError("Connection terminated unexpectedly"), connection],
  ["client not queryable", driverError("Client has encountered a connection error and is not queryable"), connection],
  [
    "pool acquire timeout",
    driverError("timeout exceeded when trying to connect"),
    { kind: "connection", retryable: false }
  ],
  ["lock timeout (55P03)", driverError("canceling statement due to lock timeout", "55P03"), { kind: "lock-timeout" }],
  [
    "statement timeout (57014)",
    driverError("canceling statement due to statement timeout", "57014"),
    { kind: "statement-timeout" }
  ],
  ["serialization failure (40001)", driverError("could not serialize access", "40001"), { kind: "serialization" }],
  ["deadlock (40P01)", driverError("deadlock detected", "40P01"), { kind: "serialization" }],
  [
    "unique violation (23505)",
    driverError("duplicate key value violates unique constraint", "23505"),
    { kind: "unique-violation" }
  ],
  ["check violation (23514)", driverError("new row violates check constraint", "23514"), { kind: "bug" }],
  ["undefined table (42P01)", driverError('relation "x" does not exist', "42P01"), { kind: "bug" }],
  ["undefined platform table (42P01)", driverError('relation "platform.x" does not exist', "42P01"), { kind: "bug" }],
  [
    "a dropped workspace's table (42P01)",
    driverError('relation "ws_acme.records" does not exist', "42P01"),
    { kind: "workspace-gone" }
  ],
  [
    "a dropped workspace's schema (3F000)",
    driverError('schema "ws_acme" does not exist', "3F000"),
    { kind: "workspace-gone" }
  ],
  ["another schema (3F000)", driverError('schema "elsewhere" does not exist', "3F000"), { kind: "bug" }],
  ["syntax error (42601)", driverError("syntax error at or near", "42601"), { kind: "bug" }],
  ["no cause", undefined, { kind: "bug" }]
]

describe("classifying a SqlError by its cause", () => {
  it.each(table)("%s", (_name, cause, expected) => {
    expect(classifySqlError(sqlError(cause))).toEqual(expected)
  })
})

describe("finding the database fault in a failure's cause", () => {
  const lost = sqlError(driverError("terminating connection due to administrator command", "57P01"))

  it("finds a SqlError that failed or died, and nothing in a cause without one", () => {
    expect(Option.map(databaseFaultOf(Cause.fail(lost)), (f) => f.kind)).toEqual(Option.some("connection"))
    expect(Option.map(databaseFaultOf(Cause.die(lost)), (f) => f.kind)).toEqual(Option.some("connection"))
    expect(databaseFaultOf(Cause.die(new Error("a bug")))).toEqual(Option.none())
    expect(databaseFaultOf(Cause.fail({ _tag: "NotFound" }))).toEqual(Option.none())
  })

  it("a lost COMMIT wins over the SqlError beside it", () => {
    const cause = Cause.combine(Cause.die(lost), Cause.die(new CommitOutcomeUnknown({ cause: lost })))
    expect(Option.map(databaseFaultOf(cause), (f) => f.kind)).toEqual(Option.some("commit-outcome-unknown"))
  })
})
