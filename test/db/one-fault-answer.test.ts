import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Exit, SchemaAST } from "effect"
import { Agents } from "../../src/agents/Agents"
import { ApiKeys } from "../../src/auth/ApiKeys"
import { Users } from "../../src/auth/Users"
import { Conflict } from "../../src/api/errors"
import type { Workspace } from "../../src/api/Workspace"
import { platformSchema } from "../../src/tenancy/migrations/platform"
import { Workspaces } from "../../src/tenancy/Workspaces"
import { holdInTransaction } from "../support/holdInTransaction"
import {
  baseUrl,
  freshWorkspace,
  testApp,
  testEngineToken,
  testPassword,
  testServices,
  uniqueSuffix
} from "../support/TestApp"
import { bearerClient, createRecord, expectStatus, signedInMember, timelineOf } from "../support/api"
import { request } from "../support/http"
import type { TestResponse } from "../support/http"

/**
 * One SQL error policy (docs/reliability.md): repositories die with what the
 * caller cannot act on, and one error middleware answers it on every route.
 * Faults are lock waits past a short `lock_timeout` on tables of the test's
 * own workspace; a lock is always held by the test's own transaction and
 * released when the test ends.
 */

const company = "crm/company"
const deal = "crm/deal"

/** Holds `LOCK TABLE` on one of the workspace's tables until the returned effect (or the scope's end). */
const lockTable = (workspace: Workspace, table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    holdInTransaction(sql`LOCK TABLE ${sql(workspace.table(table))} IN ACCESS EXCLUSIVE MODE`)
  )

const lockRow = (workspace: Workspace, id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    holdInTransaction(sql`SELECT 1 FROM ${sql(workspace.table("records"))} WHERE id = ${id} FOR UPDATE`)
  )

const lockTimedOut = {
  _tag: "ServiceUnavailable",
  message: "the data is being changed by another write; retry later",
  retryAfter: 1,
  requestId: expect.any(String)
}

const expectLockTimeout = (response: TestResponse, route: string) => {
  expect(response.status, route).toBe(503)
  expect(response.headers.get("retry-after"), route).toBe("1")
  expect(response.body, route).toEqual(lockTimedOut)
}

/** A Conflict is answered 409 on any route that declares it. */
const conflictStatus = SchemaAST.resolveAt<number>("httpApiStatus")(Conflict.ast)

layer(testApp({ databaseLockTimeout: Duration.millis(200) }), { excludeTestServices: true })(
  "one answer to database faults, on every route",
  (it) => {
    it.effect(
      "the write routes that wrapped faults themselves (chat turn, engine writes) answer a lock timeout 503, nothing changed",
      () =>
        Effect.gen(function* () {
          const base = yield* baseUrl
          const workspace = yield* freshWorkspace
          const { client } = yield* signedInMember(base, workspace)
          const { agent } = yield* (yield* Agents).create(workspace, "Assistant", "admin")
          const target = yield* createRecord(client, deal, { title: "Held", stage: "lead" })
          const release = yield* lockRow(workspace, target.id)

          // Each is answered while the row is still locked.
          const update = { tool: "update", businessObject: deal, id: target.id, values: { stage: "won" } }
          const chat = yield* client.post("/api/conversations/conv-1/tool-calls", { agent: agent.id, calls: [update] })
          expectLockTimeout(chat, "chat tool calls")
          const engine = yield* bearerClient(base, testEngineToken).post(
            `/api/engine/workspaces/${workspace.slug}/writes`,
            {
              workflowId: "crm/note-archived-deal",
              trigger: { kind: "event", businessObject: deal, businessObjectId: target.id, operation: "archived" },
              writes: [update]
            }
          )
          expectLockTimeout(engine, "engine writes")
          const patch = yield* client.patch(`/api/records/${deal}/${target.id}`, { values: { stage: "won" } })
          expectLockTimeout(patch, "record PATCH")
          yield* release

          expect(expectStatus(200)(yield* client.get(`/api/records/${deal}/${target.id}`))).toMatchObject({
            values: { stage: "lead" }
          })
          expect((yield* timelineOf(client, deal, target.id)).entries.map((e) => e.operation)).toEqual(["created"])
        })
    )

    it.effect("the broadcast stream, presence, the timeline and API-key sign-in answer a database fault 503", () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const workspace = yield* freshWorkspace
        const { client, cookie } = yield* signedInMember(base, workspace)
        const heartbeat = (id: string) =>
          request(`${base}/api/presence/${company}/${id}/form-1`, { method: "PUT", headers: { cookie } })
        const { key } = yield* (yield* ApiKeys).create(workspace, "Reader", "admin")
        const record = yield* createRecord(client, company, { name: "Acme", wonDeals: 0 })

        // The stream reads the user's grants before it opens (a member whose grants this instance has not cached yet).
        const { client: reader } = yield* signedInMember(base, workspace)
        const grants = yield* lockTable(workspace, "role_grants")
        expectLockTimeout(yield* reader.get("/api/broadcast"), "broadcast stream")
        yield* grants

        // A heartbeat checks that the record may be edited.
        const records = yield* lockTable(workspace, "records")
        expectLockTimeout(yield* heartbeat(record.id), "presence heartbeat")
        yield* records

        const audit = yield* lockTable(workspace, "audit_entries")
        expectLockTimeout(
          yield* client.get(`/api/audit/business-object/${encodeURIComponent(company)}/${record.id}`),
          "timeline"
        )
        yield* audit

        // A key that cannot be checked now is not a wrong key: 503, not 401.
        const keys = yield* lockTable(workspace, "api_keys")
        expectLockTimeout(yield* bearerClient(base, key).get("/api/auth/me"), "API key check")
        yield* keys

        // Once the locks are gone every route answers again.
        expectStatus(200)(yield* bearerClient(base, key).get("/api/auth/me"))
        expectStatus(204)(yield* heartbeat(record.id))
      })
    )

    it.effect(
      "a duplicate key no caller can act on (a unique index the service does not know) is the generic 409",
      () =>
        Effect.gen(function* () {
          const base = yield* baseUrl
          const workspace = yield* freshWorkspace
          const { client } = yield* signedInMember(base, workspace)
          const sql = yield* SqlClient.SqlClient
          // DDL takes no parameters: the business object is a constant of this file.
          yield* sql`CREATE UNIQUE INDEX ON ${sql(workspace.table("records"))} ((values->>'name'))
            WHERE business_object = ${sql.literal(`'${company}'`)}`
          yield* createRecord(client, company, { name: "Acme", wonDeals: 0 })

          const again = yield* client.post(`/api/records/${company}`, { values: { name: "Acme", wonDeals: 0 } })
          expect(again.status).toBe(409)
          expect(again.body).toEqual({
            _tag: "Conflict",
            message: "the write conflicts with existing data (a duplicate key)",
            requestId: expect.any(String)
          })
          const list = expectStatus(200)(yield* client.get(`/api/records/${company}`)) as { records: Array<unknown> }
          expect(list.records).toHaveLength(1)
        })
    )
  }
)

layer(testServices(), { excludeTestServices: true })("duplicates the caller can act on", (it) => {
  it.effect("a taken email is the Conflict (409) that names it, also for two creates at once", () =>
    Effect.gen(function* () {
      const users = yield* Users
      const sql = yield* SqlClient.SqlClient
      const email = `twice-${uniqueSuffix()}@example.com`
      yield* Effect.addFinalizer(() =>
        sql`DELETE FROM ${sql(`${platformSchema}.users`)} WHERE email = ${email}`.pipe(Effect.orDie)
      )
      const create = (name: string) => users.create({ email, name, password: testPassword }).pipe(Effect.exit)
      const [one, two] = yield* Effect.all([create("One"), create("Two")], { concurrency: 2 })
      const again = yield* users
        .create({ email: email.toUpperCase(), name: "Three", password: testPassword })
        .pipe(Effect.flip)

      const conflict = new Conflict({ message: `a user with email ${email} already exists` })
      expect([one, two].filter(Exit.isSuccess)).toHaveLength(1)
      expect([one, two].filter(Exit.isFailure)).toEqual([Exit.fail(conflict)])
      expect(again).toEqual(conflict)
      expect(conflictStatus).toBe(409)
    })
  )

  it.effect("a taken slug is the Conflict (409) that names it", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const again = yield* (yield* Workspaces).create(workspace.slug, "Other").pipe(Effect.flip)
      expect(again).toEqual(new Conflict({ message: `workspace ${workspace.slug} already exists` }))
      expect(conflictStatus).toBe(409)
    })
  )
})
