import { expect, layer } from "@effect/vitest"
import { Effect, Fiber, Option } from "effect"
import type { Workspace } from "../../src/api/Workspace"
import { Agents } from "../../src/agents/Agents"
import { ApiKeys } from "../../src/auth/ApiKeys"
import { Workspaces } from "../../src/tenancy/Workspaces"
import { ended } from "../broadcast/streamHelpers"
import { bearerClient, createRecord, signedInMember } from "../support/api"
import type { Client } from "../support/api"
import { request } from "../support/http"
import type { TestResponse } from "../support/http"
import { openSse } from "../support/sse"
import { baseUrl, testApp, testEngineToken, testServices, uniqueSuffix } from "../support/TestApp"

const deal = "crm/deal"
const gone = { _tag: "NotFound", message: "the workspace no longer exists: it has been removed" }

/** What each route that resolves a workspace asks of it, the ones reading its tables marked. */
const routesOf = (ids: { readonly record: string; readonly user: string; readonly agent: string }) => {
  const { agent, record, user } = ids
  const write = { tool: "create", businessObject: "crm/activity", values: { subject: "late" } }
  const routes: ReadonlyArray<{
    readonly name: string
    readonly readsTables: boolean
    /** Refused to an API key before anything is read (a chat turn is a user's). */
    readonly sessionOnly?: true
    readonly send: (client: Client) => Effect.Effect<TestResponse>
  }> = [
    { name: "record", readsTables: true, send: (c) => c.get(`/api/records/${deal}/${record}`) },
    { name: "records", readsTables: true, send: (c) => c.get(`/api/records/${deal}`) },
    { name: "create", readsTables: true, send: (c) => c.post(`/api/records/${deal}`, { values: { title: "Late" } }) },
    {
      name: "update",
      readsTables: true,
      send: (c) => c.patch(`/api/records/${deal}/${record}`, { values: { title: "Later" } })
    },
    { name: "archive", readsTables: true, send: (c) => c.post(`/api/records/${deal}/${record}/archive`) },
    {
      name: "revert",
      readsTables: true,
      send: (c) => c.post(`/api/records/${deal}/${record}/revert`, { entry: record, mode: "restore" })
    },
    { name: "action", readsTables: true, send: (c) => c.post(`/api/actions/${deal}/follow-up`, { id: record }) },
    {
      name: "timeline",
      readsTables: true,
      send: (c) => c.get(`/api/audit/business-object/${encodeURIComponent(deal)}/${record}`)
    },
    { name: "feed", readsTables: true, send: (c) => c.get("/api/audit/feed") },
    { name: "correlation", readsTables: true, send: (c) => c.get(`/api/audit/correlation/${record}`) },
    { name: "heartbeat", readsTables: true, send: (c) => c.put(`/api/presence/${deal}/${record}/form-1`, {}) },
    { name: "members", readsTables: true, send: (c) => c.get("/api/members") },
    { name: "member removal", readsTables: true, send: (c) => c.del(`/api/members/${user}`) },
    {
      name: "chat turn",
      readsTables: true,
      sessionOnly: true,
      send: (c) => c.post("/api/conversations/c-1/tool-calls", { agent, calls: [write] })
    },
    { name: "editors", readsTables: false, send: (c) => c.get(`/api/presence/${deal}`) },
    { name: "leave", readsTables: false, send: (c) => c.del(`/api/presence/${deal}/${record}/form-1`) },
    { name: "business objects", readsTables: false, send: (c) => c.get("/api/business-objects") },
    { name: "me", readsTables: false, send: (c) => c.get("/api/auth/me") }
  ]
  return routes
}

/**
 * The drop as another instance makes it, whose news never reaches this one
 * (its own in-process bus): this instance goes on holding the workspace, its
 * sessions, keys and grants, as one does for a request that resolved them
 * just before the drop.
 */
const dropUnheard = (workspace: Workspace) =>
  Effect.provide(
    Workspaces.use((workspaces) => workspaces.drop(workspace)),
    testServices({ redisUrl: Option.none() })
  )

layer(testApp(), { excludeTestServices: true })("requests of a workspace dropped after they resolved it", (it) => {
  it.effect(
    "every route answers 404 'no longer exists' (or what it answers from memory), never 500; a waiting long-poll 404 and a feed stream ends with workspace-removed",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const workspaces = yield* Workspaces
        const workspace = yield* Effect.acquireRelease(workspaces.create(`t-${uniqueSuffix()}`), (w) =>
          workspaces.drop(w)
        )
        const { client, cookie, user } = yield* signedInMember(base, workspace)
        const { key } = yield* (yield* ApiKeys).create(workspace, "importer", "admin")
        const { agent } = yield* (yield* Agents).create(workspace, "Assistant", "admin")
        const record = yield* createRecord(client, deal, { title: "Resolved before" })
        const routes = routesOf({ record: record.id, user: user.id, agent: agent.id })
        const callers = [
          { who: "session", client },
          { who: "API key", client: bearerClient(base, key) }
        ]
        // Each caller has been through each route once: what the instance holds of them is in its caches.
        for (const caller of callers) {
          for (const route of routes) expect((yield* route.send(caller.client)).status, route.name).toBeLessThan(500)
        }
        const feedStream = yield* openSse(`${base}/api/audit/feed`, { cookie, accept: "text/event-stream" })
        yield* feedStream.waitFor(() => true)
        const end = yield* lastCursor(client)
        const longPoll = yield* Effect.forkChild(client.get(`/api/audit/feed?wait=20&limit=1&cursor=${end}`))

        yield* dropUnheard(workspace)

        for (const caller of callers) {
          for (const route of routes) {
            if (route.sessionOnly === true && caller.who !== "session") continue
            const answer = yield* route.send(caller.client)
            const where = `${caller.who}: ${route.name}`
            if (route.readsTables) {
              expect(answer.status, where).toBe(404)
              expect(answer.body, where).toMatchObject(gone)
            } else {
              expect(answer.status, where).toBeLessThan(300)
            }
          }
        }
        const engine = yield* bearerClient(base, testEngineToken).post(
          `/api/engine/workspaces/${workspace.slug}/writes`,
          {
            workflowId: "crm/note-archived-deal",
            trigger: { kind: "event", businessObject: deal, businessObjectId: record.id, operation: "archived" },
            writes: [{ tool: "create", businessObject: "crm/activity", values: { subject: "from the engine" } }]
          }
        )
        expect(engine.status).toBe(404)
        expect(engine.body).toMatchObject(gone)
        const ndjson = yield* request(`${base}/api/audit/feed`, { headers: { cookie, accept: "application/x-ndjson" } })
        expect(ndjson.status).toBe(404)
        expect(ndjson.body).toMatchObject(gone)

        const waited = yield* Fiber.join(longPoll)
        expect(waited.status).toBe(404)
        expect(waited.body).toMatchObject(gone)
        yield* feedStream.ended
        expect((yield* feedStream.events).at(-1)).toEqual(ended("workspace-removed"))
      }),
    60_000
  )
})

/** The cursor after the last row of the feed, so that a long-poll from it waits. */
const lastCursor = (client: Client) =>
  Effect.map(client.get("/api/audit/feed?limit=500"), (page) => {
    const body = page.body
    return typeof body === "object" && body !== null && "nextCursor" in body && typeof body.nextCursor === "string"
      ? body.nextCursor
      : ""
  })
