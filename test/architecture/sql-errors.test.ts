import { describe, expect, it } from "@effect/vitest"
import type { Effect, Option } from "effect"
import { Schema } from "effect"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative, resolve } from "node:path"
import { expectTypeOf } from "vitest"
import type { Conflict, UnprocessableEntity } from "../../src/api/errors"
import type { Workspace } from "../../src/api/Workspace"
import { ok } from "../../src/idempotency/Idempotency"
import type { Idempotency, KeyedRequest } from "../../src/idempotency/Idempotency"
import type { UnitOfWork } from "../../src/unitOfWork/UnitOfWork"

/**
 * One SQL error policy (docs/reliability.md, "One SQL error policy"): a
 * repository never fails with a SqlError; it dies with it (or answers the
 * domain's own error where the caller can act), and one error middleware
 * answers what escapes any route. These checks fail on the next file that
 * handles SQL errors its own way.
 */

const root = resolve(__dirname, "../..")

const sourceFiles = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sourceFiles(path)
    return /\.(ts|tsx)$/.test(name) && !name.endsWith(".d.ts") ? [path] : []
  })

/** Block comments and whole-line comments go first: a comment may name what the code may not. */
const withoutComments = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "")

const files = sourceFiles(join(root, "src")).map((file) => ({
  path: relative(root, file),
  code: withoutComments(readFileSync(file, "utf8"))
}))

/** Only src/db/ (the classification and the repositories' `orDieOnSqlError`) knows the SqlError type or tag. */
const namesSqlError = (code: string) => /\bSqlError\b/.test(code)

/** A handler leaves faults to the error middleware: no SQL error, no database fault, no failure turned into a defect. */
const handlesFaults = (code: string) =>
  /\b(SqlError|DatabaseFault|databaseFaultOf|answerDatabaseFault|orDieOnSqlError|asServerFaults|orDie|catchAllDefect|catchAllCause)\b|serverFaults/.test(
    code
  )

/** A file that runs statements of its own. */
const runsSql = (code: string) => /\b(SqlClient\.SqlClient|ReadSqlClient|PrimaryReadSqlClient|SqlSchema)\b/.test(code)

/** The SqlError an Effect may fail with; never when none. */
type SqlErrorOf<T> =
  T extends Effect.Effect<unknown, infer E, unknown> ? Extract<E, { readonly _tag: "SqlError" }> : never

/** The SqlError any member of a service may fail with: a method's result, or an Effect it holds. */
type MembersLeak<S> = {
  [K in keyof S]: S[K] extends (...args: never) => infer R ? SqlErrorOf<R> : SqlErrorOf<S[K]>
}[keyof S]

/** The SqlError any export of a module may fail with: a service's members, a function's result, an Effect. */
type ExportsLeak<M> = {
  [K in keyof M]: M[K] extends abstract new (
    ...args: never
  ) => infer Instance
    ? MembersLeak<Instance>
    : M[K] extends (...args: never) => infer R
      ? SqlErrorOf<R>
      : SqlErrorOf<M[K]>
}[keyof M]

/** Every file outside src/db/ that runs SQL, by its exports' types. */
interface SqlModules {
  "src/agents/Agents.ts": typeof import("../../src/agents/Agents")
  "src/app/Provisioning.ts": typeof import("../../src/app/Provisioning")
  "src/unitOfWork/AuditStaging.ts": typeof import("../../src/unitOfWork/AuditStaging")
  "src/audit/History.ts": typeof import("../../src/audit/History")
  "src/audit/RecordTitles.ts": typeof import("../../src/audit/RecordTitles")
  "src/audit/Correlation.ts": typeof import("../../src/audit/Correlation")
  "src/audit/Feed.ts": typeof import("../../src/audit/Feed")
  "src/audit/Timeline.ts": typeof import("../../src/audit/Timeline")
  "src/audit/entryJson.ts": typeof import("../../src/audit/entryJson")
  "src/auth/ApiKeys.ts": typeof import("../../src/auth/ApiKeys")
  "src/auth/Members.ts": typeof import("../../src/auth/Members")
  "src/auth/Memberships.ts": typeof import("../../src/auth/Memberships")
  "src/auth/Roles.ts": typeof import("../../src/auth/Roles")
  "src/auth/Sessions.ts": typeof import("../../src/auth/Sessions")
  "src/auth/Users.ts": typeof import("../../src/auth/Users")
  "src/feedPositions/FeedHealth.ts": typeof import("../../src/feedPositions/FeedHealth")
  "src/feedPositions/FeedMode.ts": typeof import("../../src/feedPositions/FeedMode")
  "src/feedPositions/Positioner.ts": typeof import("../../src/feedPositions/Positioner")
  "src/feedPositions/positionCommits.ts": typeof import("../../src/feedPositions/positionCommits")
  "src/feedPositions/positionRows.ts": typeof import("../../src/feedPositions/positionRows")
  "src/feedPositions/positionWaiting.ts": typeof import("../../src/feedPositions/positionWaiting")
  "src/idempotency/Idempotency.ts": typeof import("../../src/idempotency/Idempotency")
  "src/ledger/AuditRowsErasure.ts": typeof import("../../src/ledger/AuditRowsErasure")
  "src/ledger/ErasedCopies.ts": typeof import("../../src/ledger/ErasedCopies")
  "src/ledger/Erasure.ts": typeof import("../../src/ledger/Erasure")
  "src/ledger/LedgerRows.ts": typeof import("../../src/ledger/LedgerRows")
  "src/ledger/Verification.ts": typeof import("../../src/ledger/Verification")
  "src/workers/CompletedRuns.ts": typeof import("../../src/workers/CompletedRuns")
  "src/queue/FailedWork.ts": typeof import("../../src/queue/FailedWork")
  "src/queue/QueueDepth.ts": typeof import("../../src/queue/QueueDepth")
  "src/records/RecordStore.ts": typeof import("../../src/records/RecordStore")
  "src/seeding/Seeders.ts": typeof import("../../src/seeding/Seeders")
  "src/tenancy/Migrations.ts": typeof import("../../src/tenancy/Migrations")
  "src/tenancy/Workspaces.ts": typeof import("../../src/tenancy/Workspaces")
  "src/tenancy/migrations/durableQueue.ts": typeof import("../../src/tenancy/migrations/durableQueue")
  "src/tenancy/migrations/feedPositionsFromWal.ts": typeof import("../../src/tenancy/migrations/feedPositionsFromWal")
  "src/tenancy/migrations/ledger.ts": typeof import("../../src/tenancy/migrations/ledger")
  "src/tenancy/migrations/platform.ts": typeof import("../../src/tenancy/migrations/platform")
  "src/tenancy/migrations/workspace.ts": typeof import("../../src/tenancy/migrations/workspace")
  "src/unitOfWork/UnitOfWork.ts": typeof import("../../src/unitOfWork/UnitOfWork")
  "src/workers/pruning.ts": typeof import("../../src/workers/pruning")
}

/** The same files, as a value the test compares with the source tree (tsc keeps both lists equal). */
const sqlModules = {
  "src/agents/Agents.ts": true,
  "src/app/Provisioning.ts": true,
  "src/unitOfWork/AuditStaging.ts": true,
  "src/audit/History.ts": true,
  "src/audit/RecordTitles.ts": true,
  "src/audit/Correlation.ts": true,
  "src/audit/Feed.ts": true,
  "src/audit/Timeline.ts": true,
  "src/audit/entryJson.ts": true,
  "src/auth/ApiKeys.ts": true,
  "src/auth/Members.ts": true,
  "src/auth/Memberships.ts": true,
  "src/auth/Roles.ts": true,
  "src/auth/Sessions.ts": true,
  "src/auth/Users.ts": true,
  "src/feedPositions/FeedHealth.ts": true,
  "src/feedPositions/FeedMode.ts": true,
  "src/feedPositions/Positioner.ts": true,
  "src/feedPositions/positionCommits.ts": true,
  "src/feedPositions/positionRows.ts": true,
  "src/feedPositions/positionWaiting.ts": true,
  "src/idempotency/Idempotency.ts": true,
  "src/ledger/AuditRowsErasure.ts": true,
  "src/ledger/ErasedCopies.ts": true,
  "src/ledger/Erasure.ts": true,
  "src/ledger/LedgerRows.ts": true,
  "src/ledger/Verification.ts": true,
  "src/workers/CompletedRuns.ts": true,
  "src/queue/FailedWork.ts": true,
  "src/queue/QueueDepth.ts": true,
  "src/records/RecordStore.ts": true,
  "src/seeding/Seeders.ts": true,
  "src/tenancy/Migrations.ts": true,
  "src/tenancy/Workspaces.ts": true,
  "src/tenancy/migrations/durableQueue.ts": true,
  "src/tenancy/migrations/feedPositionsFromWal.ts": true,
  "src/tenancy/migrations/ledger.ts": true,
  "src/tenancy/migrations/platform.ts": true,
  "src/tenancy/migrations/workspace.ts": true,
  "src/unitOfWork/UnitOfWork.ts": true,
  "src/workers/pruning.ts": true
} satisfies Record<keyof SqlModules, true>

describe("one SQL error policy", () => {
  it("no file outside src/db/ names SqlError: repositories die with it through src/db's orDieOnSqlError", () => {
    const offending = files.filter((file) => !file.path.startsWith("src/db/") && namesSqlError(file.code))
    expect(offending.map((file) => file.path)).toEqual([])
  })

  it("no route handler deals with SQL errors or database faults: the error middleware answers them", () => {
    const handlers = files.filter((file) => file.path.startsWith("src/http/handlers/"))
    expect(handlers.length).toBeGreaterThan(5)
    expect(handlers.filter((file) => handlesFaults(file.code)).map((file) => file.path)).toEqual([])
  })

  it("no export of a file that runs SQL can fail with a SqlError (checked by tsc), and every such file is checked", () => {
    expectTypeOf<{ [K in keyof SqlModules]: ExportsLeak<SqlModules[K]> }>().toEqualTypeOf<{
      [K in keyof SqlModules]: never
    }>()
    const running = files.filter((file) => !file.path.startsWith("src/db/") && runsSql(file.code))
    expect(running.map((file) => file.path).sort()).toEqual(Object.keys(sqlModules).sort())
  })

  it("the generic runners pass the body's errors on and add no SqlError (checked by tsc)", () => {
    class BodyError {
      readonly _tag = "BodyError"
    }
    type Body = Effect.Effect<number, BodyError>
    const inUnit = (units: UnitOfWork["Service"], workspace: Workspace, body: Body) => units.run(workspace, body)
    const once = (idempotency: Idempotency["Service"], request: Option.Option<KeyedRequest>, body: Body) =>
      idempotency.run(request, ok(Schema.Number), body)
    expectTypeOf<Effect.Error<ReturnType<typeof inUnit>>>().toEqualTypeOf<BodyError>()
    expectTypeOf<Effect.Error<ReturnType<typeof once>>>().toEqualTypeOf<BodyError | Conflict | UnprocessableEntity>()
    expect(new BodyError()._tag).toBe("BodyError")
  })

  it("the rules catch what they forbid", () => {
    expect(namesSqlError('import type { SqlError } from "effect/sql/SqlError"')).toBe(true)
    expect(namesSqlError('Effect.catchTag("SqlError", Effect.die)')).toBe(true)
    expect(namesSqlError("sql.withTransaction, orDieOnSqlError")).toBe(false)
    expect(handlesFaults("units.run(workspace, once).pipe(asServerFaults)")).toBe(true)
    expect(handlesFaults('import { orDieOnSqlError } from "../../db/orDieOnSqlError"')).toBe(true)
    expect(handlesFaults("records.get(workspace, id).pipe(Effect.orDie)")).toBe(true)
    expect(handlesFaults("records.get(workspace, businessObject, path.id)")).toBe(false)
    expect(runsSql("const sql = yield* SqlClient.SqlClient")).toBe(true)
    expect(runsSql("const units = yield* UnitOfWork")).toBe(false)
  })
})
