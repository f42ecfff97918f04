import { expect, layer } from "@effect/vitest"
import { SqlClient } from "effect/sql"
import { Effect } from "effect"
import { Agents } from "../../src/agents/Agents"
import { provisionWorkspace } from "../../src/app/Provisioning"
import { ApiKeys } from "../../src/auth/ApiKeys"
import { Roles } from "../../src/auth/Roles"
import { Seeders } from "../../src/seeding/Seeders"
import { queueTable } from "../../src/tenancy/migrations/durableQueue"
import { Workspaces } from "../../src/tenancy/Workspaces"
import { eventually } from "../broadcast/streamHelpers"
import { ChatTurn } from "../../src/api/ChatApi"
import { EngineWrites } from "../../src/api/EngineApi"
import type { RecordWrite } from "../../src/api/RecordWrite"
import { bearerClient, createRecord, recordsOf, signedInMember, timelineOf } from "../support/api"
import type { Client } from "../support/api"
import { refusal } from "../support/apiCaller"
import { baseUrl, freshWorkspace, testApp, testEngineToken, uniqueSuffix } from "../support/TestApp"

const deal = "crm/deal"
const activity = "crm/activity"
const company = "crm/company"

const listOf = (client: Client, businessObject: string) =>
  Effect.map(recordsOf(client, businessObject).list(), (answer) => answer.body.records)

/** The only row of a record's timeline. */
const onlyRow = (client: Client, businessObject: string, id: string) =>
  Effect.map(timelineOf(client, businessObject, id), (page) => {
    expect(page.entries).toHaveLength(1)
    return page.entries[0]!
  })

layer(testApp(), { excludeTestServices: true })("every write path carries its actor (spec, the Actor table)", (it) => {
  it.effect("HTTP request by a signed-in user: {kind: user, id, name, email}; no frame above, so no cause", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const { client, user } = yield* signedInMember(yield* baseUrl, workspace)
      const created = yield* createRecord(client, deal, { title: "By hand" })
      const row = yield* onlyRow(client, deal, created.id)
      expect(row.actor).toEqual({ kind: "user", id: user.id, name: user.name, email: user.email })
      expect(row.cause).toBeNull()
    })
  )

  it.effect(
    "HTTP request with an API key: {kind: service-account, id: the key's id, name}; refused where its roles do not reach",
    () =>
      Effect.gen(function* () {
        const workspace = yield* freshWorkspace
        const base = yield* baseUrl
        const { client: admin } = yield* signedInMember(base, workspace)
        yield* (yield* Roles).grant(workspace, "deal-writer", deal, "update")
        const { apiKey, key } = yield* (yield* ApiKeys).create(workspace, "Importer", "deal-writer")
        const importer = bearerClient(base, key)

        const created = yield* createRecord(importer, deal, { title: "Imported" })
        const row = yield* onlyRow(admin, deal, created.id)
        expect(row.actor).toEqual({ kind: "service-account", id: apiKey.id, name: "Importer" })
        expect(row.cause).toBeNull()

        const refused = yield* refusal(recordsOf(importer, company).create({ name: "Not mine to make" }))
        expect(refused.status).toBe(403)
        expect(refused.body).toEqual({
          _tag: "Forbidden",
          message: "service-account Importer may not update crm/company",
          requestId: expect.any(String)
        })
        expect(yield* listOf(admin, company)).toEqual([])
      })
  )

  it.effect(
    "seeder: {kind: system, name: seeder:crm} when a workspace is provisioned; seeding again writes nothing",
    () =>
      Effect.gen(function* () {
        const workspaces = yield* Workspaces
        const { seeded, workspace } = yield* Effect.acquireRelease(
          provisionWorkspace(`t-${uniqueSuffix()}`),
          ({ workspace }) => workspaces.drop(workspace)
        )
        expect(seeded).toEqual([{ plugin: "crm", written: 2 }])
        const { client } = yield* signedInMember(yield* baseUrl, workspace)
        const [acme, ...otherCompanies] = yield* listOf(client, company)
        const [pilot, ...otherDeals] = yield* listOf(client, deal)
        expect(otherCompanies).toEqual([])
        expect(otherDeals).toEqual([])
        expect(acme?.values.name).toBe("Acme Corporation")
        expect(pilot?.values).toMatchObject({ title: "Acme pilot", company: acme?.id, amount: "12500.00" })

        const row = yield* onlyRow(client, deal, pilot!.id)
        expect(row).toMatchObject({ operation: "created", record: pilot!.values })
        expect(row.actor).toEqual({ kind: "system", name: "seeder:crm" })
        expect(row.cause).toBeNull()

        // On demand (the CLI's `workspace seed`): idempotent.
        expect(yield* (yield* Seeders).seedWorkspace(workspace)).toEqual([{ plugin: "crm", written: 0 }])
        expect((yield* listOf(client, company)).map((r) => r.id)).toEqual([acme!.id])
        expect((yield* listOf(client, deal)).map((r) => r.id)).toEqual([pilot!.id])
        yield* onlyRow(client, deal, pilot!.id)
      })
  )

  it.effect("workflow run: {kind: system, name: workflow:<id>}, caused by the committed event that triggered it", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const { client } = yield* signedInMember(yield* baseUrl, workspace)
      const acme = yield* createRecord(client, company, { name: "Acme" })
      const old = yield* createRecord(client, deal, { title: "Old one", company: acme.id })
      yield* recordsOf(client, deal).archive(old.id)

      yield* eventually(
        "the workflow has run",
        Effect.map(listOf(client, activity), (records) => records.length === 1)
      )
      const [note] = yield* listOf(client, activity)
      expect(note?.values).toEqual({ subject: 'Deal "Old one" was archived', company: acme.id })
      const row = yield* onlyRow(client, activity, note!.id)
      expect(row.actor).toEqual({ kind: "system", name: "workflow:crm/note-archived-deal" })
      expect(row.cause).toEqual({
        kind: "event",
        businessObject: deal,
        businessObjectId: old.id,
        operation: "archived"
      })
    })
  )

  it.effect("the engine's write route: no permission guard, and only the engine's credential gets in", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const base = yield* baseUrl
      const { client: admin, cookie } = yield* signedInMember(base, workspace)
      const { key } = yield* (yield* ApiKeys).create(workspace, "Admin key", "admin")
      const trigger = {
        kind: "event",
        businessObject: deal,
        businessObjectId: crypto.randomUUID(),
        operation: "archived"
      } as const
      const body = new EngineWrites({
        workflowId: "crm/note-archived-deal",
        trigger,
        writes: [{ tool: "create", businessObject: company, values: { name: "Made by the engine" } }]
      })
      const write = (caller: Client, payload: EngineWrites) =>
        caller.call((api) => api.engine.writes({ params: { workspace: workspace.slug }, payload, headers: {} }))

      // A session or an API key, even an admin's, is not the engine.
      for (const caller of [admin, bearerClient(base, key), bearerClient(base, `${testEngineToken}x`)]) {
        const refused = yield* refusal(write(caller, body))
        expect(refused.status).toBe(401)
        expect(refused.body).toMatchObject({ _tag: "Unauthorized" })
      }
      expect(cookie).not.toBe("")
      expect(yield* listOf(admin, company)).toEqual([])

      const engine = bearerClient(base, testEngineToken)
      const unknown = yield* refusal(write(engine, new EngineWrites({ ...body, workflowId: "crm/no-such-workflow" })))
      expect(unknown.status).toBe(404)

      // The engine is no principal and holds no grants: nothing is checked.
      const written = (yield* write(engine, body)).body
      const made = written.records[0]!
      const row = yield* onlyRow(admin, company, made.id)
      expect(row.actor).toEqual({ kind: "system", name: "workflow:crm/note-archived-deal" })
      expect(row.cause).toEqual(trigger)
    })
  )

  it.effect("agent run with nobody watching: {kind: agent, id, name}, limited by the agent's own grants", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const base = yield* baseUrl
      const { client: admin } = yield* signedInMember(base, workspace)
      const roles = yield* Roles
      yield* roles.grant(workspace, "note-taker", activity, "update")
      yield* roles.grant(workspace, "note-taker", deal, "read")
      const { agent, key } = yield* (yield* Agents).create(workspace, "Note taker", "note-taker")
      const bot = bearerClient(base, key)
      expect((yield* bot.call((api) => api.auth.me())).body).toMatchObject({
        kind: "agent",
        id: agent.id,
        name: "Note taker"
      })

      const note = yield* createRecord(bot, activity, { subject: "Called the customer" })
      const row = yield* onlyRow(admin, activity, note.id)
      expect(row.actor).toEqual({ kind: "agent", id: agent.id, name: "Note taker" })
      expect(row.cause).toBeNull()

      const refused = yield* refusal(recordsOf(bot, deal).create({ title: "Not mine to make" }))
      expect(refused.status).toBe(403)
      expect(refused.body).toEqual({
        _tag: "Forbidden",
        message: "agent Note taker may not update crm/deal",
        requestId: expect.any(String)
      })
      expect(yield* listOf(admin, deal)).toEqual([])
    })
  )

  it.effect(
    "chat turn: the user stays the actor, within the user's grants; the cause names the conversation and the agent",
    () =>
      Effect.gen(function* () {
        const workspace = yield* freshWorkspace
        const base = yield* baseUrl
        const { client: admin } = yield* signedInMember(base, workspace)
        yield* (yield* Roles).grant(workspace, "deal-editor", deal, "update")
        const { client, user } = yield* signedInMember(base, workspace, "deal-editor")
        // The agent's own grants are wide; in a chat turn they do not count.
        const { agent, key } = yield* (yield* Agents).create(workspace, "Sales assistant", "admin")
        const target = yield* createRecord(admin, deal, { title: "Chatty", stage: "lead" })
        const turnOf = (caller: Client, calls: ReadonlyArray<RecordWrite>, agentId = agent.id) =>
          caller.call((api) =>
            api.chat.toolCalls({
              params: { conversationId: "conv-42" },
              payload: new ChatTurn({ agent: agentId, calls }),
              headers: {}
            })
          )
        const turn = (calls: ReadonlyArray<RecordWrite>, agentId = agent.id) => turnOf(client, calls, agentId)

        const done = (yield* turn([
          { tool: "update", businessObject: deal, id: target.id, values: { stage: "proposal" } }
        ])).body
        expect(done.records[0]?.values.stage).toBe("proposal")
        const [row, ...older] = (yield* timelineOf(admin, deal, target.id)).entries
        expect(older).toHaveLength(1)
        expect(row?.actor).toEqual({ kind: "user", id: user.id, name: user.name, email: user.email })
        expect(row?.cause).toEqual({
          kind: "conversation",
          conversationId: "conv-42",
          agent: { id: agent.id, name: "Sales assistant" }
        })

        // One call beyond the user's grants refuses the whole turn: nothing is written.
        const refused = yield* refusal(
          turn([
            { tool: "update", businessObject: deal, id: target.id, values: { stage: "won" } },
            { tool: "create", businessObject: company, values: { name: "Not the user's to make" } }
          ])
        )
        expect(refused.status).toBe(403)
        expect(refused.body).toEqual({
          _tag: "Forbidden",
          message: `user ${user.name} may not update crm/company`,
          requestId: expect.any(String)
        })
        expect((yield* timelineOf(admin, deal, target.id)).entries).toHaveLength(2)
        expect(yield* listOf(admin, company)).toEqual([])

        // Raw on purpose: a turn without calls, which the contract's client refuses to send.
        const empty = yield* client.post("/api/conversations/conv-42/tool-calls", { agent: agent.id, calls: [] })
        expect(empty.status).toBe(400)
        const aCall = [{ tool: "create", businessObject: deal, values: {} }] as const
        expect((yield* refusal(turn(aCall, crypto.randomUUID()))).status).toBe(404)
        // A chat turn is a user's: not an API key's or an agent's.
        const byAgent = yield* refusal(turnOf(bearerClient(base, key), aCall))
        expect(byAgent.status).toBe(403)
      })
  )

  it.effect("background job: enqueued as U, run by the worker's own fiber, written as U with the job as cause", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const workspace = yield* freshWorkspace
      const { client, user } = yield* signedInMember(yield* baseUrl, workspace)
      const acme = yield* createRecord(client, company, { name: "Acme" })
      const target = yield* createRecord(client, deal, { title: "Needs a call", company: acme.id })
      // The action only enqueues; the activity comes later, from the worker.
      yield* recordsOf(client, deal).action("follow-up", target.id)

      yield* eventually(
        "the job has run",
        Effect.map(listOf(client, activity), (records) => records.length === 1)
      )
      const [note] = yield* listOf(client, activity)
      expect(note?.values).toEqual({ subject: "Follow up on Needs a call", company: acme.id, deal: target.id })
      const row = yield* onlyRow(client, activity, note!.id)
      expect(row.actor).toEqual({ kind: "user", id: user.id, name: user.name, email: user.email })
      expect(row.cause).toEqual({ kind: "job", job: "crm/follow-up", jobId: expect.any(String) })
      const jobId = row.cause?.kind === "job" ? row.cause.jobId : ""
      yield* eventually(
        "the queue marks the job done",
        Effect.map(
          sql<{ readonly state: string }>`SELECT state FROM ${sql(queueTable)} WHERE id = ${jobId}`,
          (rows) => rows[0]?.state === "completed"
        )
      )
    })
  )
})
