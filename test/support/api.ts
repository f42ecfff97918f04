import { Effect } from "effect"
import type { Workspace } from "../../src/api/Workspace"
import { freshUser, testPassword } from "./TestApp"
import { request, signIn } from "./http"
import type { TestResponse } from "./http"

/** A signed-in client of one workspace: JSON requests with its session cookie. */
export interface Client {
  readonly base: string
  readonly get: (path: string) => Effect.Effect<TestResponse>
  readonly post: (path: string, json?: unknown) => Effect.Effect<TestResponse>
  readonly patch: (path: string, json: unknown) => Effect.Effect<TestResponse>
  readonly put: (path: string, json: unknown) => Effect.Effect<TestResponse>
  readonly del: (path: string) => Effect.Effect<TestResponse>
}

export const clientFor = (base: string, cookie: string, extra: Record<string, string> = {}): Client => {
  const headers = cookie === "" ? extra : { cookie, ...extra }
  return {
    base,
    get: (path) => request(`${base}${path}`, { headers }),
    post: (path, json) => request(`${base}${path}`, { method: "POST", headers, json: json ?? {} }),
    patch: (path, json) => request(`${base}${path}`, { method: "PATCH", headers, json }),
    put: (path, json) => request(`${base}${path}`, { method: "PUT", headers, json }),
    del: (path) => request(`${base}${path}`, { method: "DELETE", headers })
  }
}

/** A client presenting `Authorization: Bearer <key>` (an API key, an agent's key, the engine's token). */
export const bearerClient = (base: string, key: string): Client =>
  clientFor(base, "", { authorization: `Bearer ${key}` })

/** A new member of `workspace` holding `role`, signed in. */
export const signedInMember = (base: string, workspace: Workspace, role = "admin") =>
  Effect.gen(function* () {
    const user = yield* freshUser({ workspace, role })
    const cookie = yield* signIn(base, { workspace: workspace.slug, email: user.email, password: testPassword })
    return { user, cookie, client: clientFor(base, cookie) }
  })

/** The body of a response that must have the given status. */
export const expectStatus = (status: number) => (response: TestResponse) => {
  if (response.status !== status) {
    throw new Error(`expected ${status}, got ${response.status}: ${JSON.stringify(response.body)}`)
  }
  return response.body
}

export interface RecordBody {
  readonly id: string
  readonly state: string
  readonly values: Record<string, unknown>
}

export interface EntryBody {
  readonly id: string
  readonly at: string
  readonly actor: unknown
  readonly correlationId: string
  readonly businessObject: string
  readonly businessObjectId: string
  readonly operation: string
  readonly cause: unknown
  readonly record?: Record<string, unknown>
  readonly changes?: Record<string, unknown>
}

export interface PageBody {
  readonly entries: ReadonlyArray<EntryBody>
  readonly nextCursor: string | null
}

/** Creates a record over HTTP and returns it. */
export const createRecord = (client: Client, businessObject: string, values: unknown, draft = false) =>
  Effect.map(
    client.post(`/api/records/${businessObject}`, { values, draft }),
    (r) => expectStatus(201)(r) as RecordBody
  )

/** The newest page of a record's timeline (200 expected). */
export const timelineOf = (client: Client, businessObject: string, id: string, query = "") =>
  Effect.map(
    client.get(`/api/audit/business-object/${encodeURIComponent(businessObject)}/${id}${query}`),
    (r) => expectStatus(200)(r) as PageBody
  )
