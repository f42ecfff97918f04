import { Duration, Effect } from "effect"
import { Sessions } from "../../../src/auth/Sessions"
import { bearerClient, createRecord, recordsOf, timelineOf } from "../../support/api"
import { freshUser, testEngineToken } from "../../support/TestApp"
import type { Fixture } from "./fixture"
import type { RawResponse } from "./rawHttp"
import { sendRaw } from "./rawHttp"
import type { Route } from "./routes"

/** A request that the route would answer with a 2xx, as the given credentials. */
export interface ValidRequest {
  readonly method: string
  readonly path: string
  readonly json: unknown
  /** Who it is meant for: the session cookie (with Origin), an API key, nobody (sign-in) or the engine's token. */
  readonly credential: "cookie" | "apiKey" | "none" | "engine"
  /** A session of someone else than the fixture's admin, for a request that would end the admin's own. */
  readonly cookie?: string
}

const apiKeyClient = (fixture: Fixture) => bearerClient(fixture.origin, fixture.apiKey)

const fresh = (fixture: Fixture, businessObject: string, values: Readonly<Record<string, unknown>>, draft = false) =>
  Effect.runPromise(createRecord(apiKeyClient(fixture), businessObject, values, draft)).then((record) => record.id)

/** A new member of the fixture's workspace (no role), removed with the fixture. */
const freshMember = (fixture: Fixture) => fixture.run(freshUser({ workspace: fixture.workspace }))

/** A new member holding admin, signed in: their session, as a cookie pair. */
const freshMemberSession = async (fixture: Fixture) => {
  const user = await fixture.run(freshUser({ workspace: fixture.workspace, role: "admin" }))
  return fixture.run(
    Effect.map(
      Effect.flatMap(Sessions, (sessions) => sessions.start(user.id, fixture.workspace.id, Duration.hours(1))),
      (token) => `session=${token}`
    ).pipe(Effect.provide(Sessions.layer))
  )
}

const freshArchived = async (fixture: Fixture) => {
  const id = await fresh(fixture, "crm/company", { name: "To restore" })
  await Effect.runPromise(recordsOf(apiKeyClient(fixture), "crm/company").archive(id))
  return id
}

/** A company renamed once: its id and its `created` entry, to revert to. */
const freshRenamed = async (fixture: Fixture) => {
  const id = await fresh(fixture, "crm/company", { name: "Before" })
  await Effect.runPromise(recordsOf(apiKeyClient(fixture), "crm/company").update(id, { name: "After" }))
  const page = await Effect.runPromise(timelineOf(apiKeyClient(fixture), "crm/company", id))
  return { id, created: page.entries[page.entries.length - 1]?.id ?? "" }
}

/**
 * For each known route, a request it accepts, on a target made for it
 * (a fresh record to delete, a draft to publish...), so a refusal can only
 * come from the one thing a test changes. Unknown routes (added to `Api`
 * later) get none: their tests assert what holds whatever the payload.
 */
export const validRequestFor = async (
  fixture: Fixture,
  route: Route,
  password: string
): Promise<ValidRequest | undefined> => {
  switch (route.key) {
    case "auth.login":
      return {
        method: "POST",
        path: "/api/auth/login",
        json: { workspace: fixture.workspace.slug, email: fixture.adminEmail, password },
        credential: "none"
      }
    case "auth.logout":
      return { method: "POST", path: "/api/auth/logout", json: undefined, credential: "cookie" }
    case "auth.logoutEverywhere":
      // Every session of the signer ends: someone else's, so that the admin's stays.
      return {
        method: "POST",
        path: "/api/auth/logout-everywhere",
        json: undefined,
        credential: "cookie",
        cookie: await freshMemberSession(fixture)
      }
    case "members.remove":
      return {
        method: "DELETE",
        path: `/api/members/${(await freshMember(fixture)).id}`,
        json: undefined,
        credential: "cookie"
      }
    case "members.setRole":
      return {
        method: "PUT",
        path: `/api/members/${(await freshMember(fixture)).id}/role`,
        json: { role: "admin" },
        credential: "cookie"
      }
    case "records.create":
      return {
        method: "POST",
        path: "/api/records/crm/company",
        json: { values: { name: "Made in a test" } },
        credential: "cookie"
      }
    case "records.bulk":
      return {
        method: "POST",
        path: "/api/records/crm/company/bulk",
        json: { items: [{ create: { name: "Made in bulk" } }] },
        credential: "cookie"
      }
    case "records.update":
      return {
        method: "PATCH",
        path: `/api/records/crm/company/${await fresh(fixture, "crm/company", { name: "To rename" })}`,
        json: { values: { name: "Renamed" } },
        credential: "cookie"
      }
    case "records.remove":
      return {
        method: "DELETE",
        path: `/api/records/crm/company/${await fresh(fixture, "crm/company", { name: "To delete" })}`,
        json: undefined,
        credential: "cookie"
      }
    case "records.publish":
      return {
        method: "POST",
        path: `/api/records/crm/deal/${await fresh(fixture, "crm/deal", { title: "To publish" }, true)}/publish`,
        json: undefined,
        credential: "cookie"
      }
    case "records.archive":
      return {
        method: "POST",
        path: `/api/records/crm/company/${await fresh(fixture, "crm/company", { name: "To archive" })}/archive`,
        json: undefined,
        credential: "cookie"
      }
    case "records.restore":
      return {
        method: "POST",
        path: `/api/records/crm/company/${await freshArchived(fixture)}/restore`,
        json: undefined,
        credential: "cookie"
      }
    case "records.revert": {
      const { id, created } = await freshRenamed(fixture)
      return {
        method: "POST",
        path: `/api/records/crm/company/${id}/revert`,
        json: { entry: created, mode: "restore" },
        credential: "cookie"
      }
    }
    case "records.erase":
      return {
        method: "POST",
        path: `/api/records/crm/company/${await fresh(fixture, "crm/company", { name: "To erase", website: "https://erase.example" })}/erase`,
        json: { fields: ["website"] },
        credential: "cookie"
      }
    case "records.action":
      return {
        method: "POST",
        path: "/api/actions/crm/deal/close",
        json: {
          id: await fresh(fixture, "crm/deal", { title: "To close", stage: "open", company: fixture.ids.company })
        },
        credential: "cookie"
      }
    case "presence.heartbeat":
      return {
        method: "PUT",
        path: `/api/presence/crm/company/${fixture.ids.company}/editor-rules`,
        json: undefined,
        credential: "cookie"
      }
    case "presence.leave":
      return {
        method: "DELETE",
        path: `/api/presence/crm/company/${fixture.ids.company}/editor-rules`,
        json: undefined,
        credential: "cookie"
      }
    case "chat.toolCalls":
      return {
        method: "POST",
        path: "/api/conversations/conversation-rules/tool-calls",
        json: {
          agent: fixture.agentId,
          calls: [{ tool: "create", businessObject: "crm/activity", values: { subject: "From a chat turn" } }]
        },
        credential: "cookie"
      }
    case "engine.writes":
      return {
        method: "POST",
        path: `/api/engine/workspaces/${fixture.workspace.slug}/writes`,
        json: {
          workflowId: "crm/note-archived-deal",
          trigger: {
            kind: "event",
            businessObject: "crm/deal",
            businessObjectId: fixture.ids.deal,
            operation: "archived"
          },
          writes: [{ tool: "create", businessObject: "crm/activity", values: { subject: "From the engine" } }]
        },
        credential: "engine"
      }
    default:
      return undefined
  }
}

export interface Sent {
  readonly method: string
  readonly path: string
  readonly headers?: Record<string, string>
  readonly body?: Buffer | string
}

/** Sends one request as raw bytes; a hang or a drop is a failure naming the request. */
export const send = async (fixture: Fixture, request: Sent): Promise<RawResponse & { readonly json: unknown }> => {
  const outcome = await sendRaw(
    fixture.port,
    {
      method: request.method,
      target: Buffer.from(request.path, "latin1"),
      headers: Object.entries(request.headers ?? {}).map(
        ([name, value]) => [name, Buffer.from(value, "latin1")] as const
      ),
      body:
        request.body === undefined
          ? undefined
          : Buffer.isBuffer(request.body)
            ? request.body
            : Buffer.from(request.body, "utf8")
    },
    30_000
  )
  if (outcome._tag !== "Answered")
    throw new Error(`${request.method} ${request.path.slice(0, 120)}: no answer (${JSON.stringify(outcome)})`)
  let json: unknown
  try {
    json = JSON.parse(outcome.response.body.toString("utf8"))
  } catch {
    json = undefined
  }
  return { ...outcome.response, json }
}

/** The credential headers of a valid request (the cookie comes with the service's own Origin). */
export const credentialHeaders = (
  fixture: Fixture,
  credential: ValidRequest["credential"],
  cookie = fixture.adminCookie
): Record<string, string> => {
  switch (credential) {
    case "cookie":
      return { cookie, origin: fixture.origin }
    case "apiKey":
      return { authorization: `Bearer ${fixture.apiKey}` }
    case "engine":
      return { authorization: `Bearer ${testEngineToken}` }
    case "none":
      return { origin: fixture.origin }
  }
}

/** Headers and body of a valid request, JSON-encoded. */
export const jsonRequest = (valid: ValidRequest, headers: Record<string, string>): Sent => ({
  method: valid.method,
  path: valid.path,
  headers: valid.json === undefined ? headers : { ...headers, "content-type": "application/json" },
  ...(valid.json === undefined ? {} : { body: JSON.stringify(valid.json) })
})
