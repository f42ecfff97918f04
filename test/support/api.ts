import { expect } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { timelineDefaultLimit } from "../../src/api/AuditApi"
import { TimelinePage } from "../../src/api/AuditEntry"
import { CreateRecord, RunAction, recordsDefaultLimit, UpdateRecord } from "../../src/api/RecordsApi"
import { RecordAsOf, type RevertRecord } from "../../src/api/RecordHistory"
import { StoredRecord } from "../../src/api/StoredRecord"
import type { Workspace } from "../../src/api/Workspace"
import { typeParams } from "../../src/client/pathParams"
import { apiCaller, recordPath, settled, timelinePath, typePath } from "./apiCaller"
import type { Answer, Call } from "./apiCaller"
import { freshUser, testPassword } from "./TestApp"
import { request, signIn } from "./http"
import type { TestResponse } from "./http"

/**
 * A caller of the service with its credentials: `call` reaches the routes of
 * the contract typed (apiCaller.ts); `get`/`post`/`patch`/`del` send raw
 * JSON requests by path, for tests that must send what the contract would
 * not (hostile or malformed requests).
 */
export interface Client {
  readonly base: string
  readonly call: Call
  readonly get: (path: string) => Effect.Effect<TestResponse>
  readonly post: (path: string, json?: unknown) => Effect.Effect<TestResponse>
  readonly patch: (path: string, json: unknown) => Effect.Effect<TestResponse>
  readonly put: (path: string, json: unknown) => Effect.Effect<TestResponse>
  readonly del: (path: string) => Effect.Effect<TestResponse>
}

/** `cookie` ("" for none) and `extra` headers on every request; `Origin` is the base's, as from the service's own page, unless `extra` names one. */
export const clientFor = (base: string, cookie: string, extra: Record<string, string> = {}): Client => {
  const headers = cookie === "" ? extra : { cookie, ...extra }
  return {
    base,
    call: apiCaller(base, { origin: new URL(base).origin, ...headers }),
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

/** The health routes, asked anonymously through the contract: every answer, 2xx or not (503 when not ready). */
export const healthOf = (base: string) => {
  const anonymous = clientFor(base, "")
  return {
    live: settled(anonymous.call((api) => api.health.live())),
    ready: settled(anonymous.call((api) => api.health.ready())),
    health: settled(anonymous.call((api) => api.health.health()))
  }
}

/** The body of a response that must have the given status. */
export const expectStatus =
  (status: number) =>
  <Body>(response: { readonly status: number; readonly body: Body }): Body => {
    if (response.status !== status) {
      throw new Error(`expected ${status}, got ${response.status}: ${JSON.stringify(response.body)}`)
    }
    return response.body
  }

/** What a write may carry besides its body: an `Idempotency-Key`. */
export interface WriteOptions {
  readonly idempotencyKey?: string
}

const writeHeaders = (options: WriteOptions) =>
  options.idempotencyKey === undefined ? {} : { "idempotency-key": options.idempotencyKey }

/** The answer's body when it is an instance of `schema` (the record GET answers one of two shapes); else a defect. */
const narrowed =
  <A>(is: (body: unknown) => body is A) =>
  <B>(answer: Answer<B>): Effect.Effect<Answer<A>> =>
    is(answer.body)
      ? Effect.succeed({ ...answer, body: answer.body })
      : Effect.die(new Error("unexpected answer shape"))
const isStoredRecord = (body: unknown): body is StoredRecord => body instanceof StoredRecord
const isRecordAsOf = (body: unknown): body is RecordAsOf => body instanceof RecordAsOf

/**
 * The records routes of one business object, called through the contract
 * (`client.call`): each succeeds with the 2xx answer and fails with the
 * `Refusal` of any other (`refusal(...)` expects one).
 */
export const recordsOf = (client: Client, businessObject: string) => {
  const type = typePath(businessObject)
  const at = (id: string) => recordPath(businessObject, id)
  const lifecycle =
    (step: "publish" | "archive" | "restore") =>
    (id: string, options: WriteOptions = {}) =>
      client.call((api) => api.records[step]({ params: at(id), headers: writeHeaders(options) }))
  return {
    list: (limit = recordsDefaultLimit) => client.call((api) => api.records.list({ params: type, query: { limit } })),
    get: (id: string) =>
      client
        .call((api) => api.records.get({ params: at(id), query: {} }))
        .pipe(Effect.flatMap(narrowed(isStoredRecord))),
    /** The record as it was: `asOf` an entry id or an ISO-8601 instant. */
    asOf: (id: string, asOf: string) =>
      client
        .call((api) => api.records.get({ params: at(id), query: { asOf } }))
        .pipe(Effect.flatMap(narrowed(isRecordAsOf))),
    revert: (id: string, body: RevertRecord, options: WriteOptions & { readonly ifMatch?: string } = {}) =>
      client.call((api) =>
        api.records.revert({
          params: at(id),
          payload: body,
          headers: {
            ...writeHeaders(options),
            ...(options.ifMatch === undefined ? {} : { "if-match": options.ifMatch })
          }
        })
      ),
    create: (values: Values, options: WriteOptions & { readonly draft?: boolean } = {}) =>
      client.call((api) =>
        api.records.create({
          params: type,
          payload: new CreateRecord({ values, draft: options.draft ?? false }),
          headers: writeHeaders(options)
        })
      ),
    update: (id: string, values: Values, options: WriteOptions = {}) =>
      client.call((api) =>
        api.records.update({ params: at(id), payload: new UpdateRecord({ values }), headers: writeHeaders(options) })
      ),
    remove: (id: string, options: WriteOptions = {}) =>
      client.call((api) => api.records.remove({ params: at(id), headers: writeHeaders(options) })),
    publish: lifecycle("publish"),
    archive: lifecycle("archive"),
    restore: lifecycle("restore"),
    action: (action: string, id: string, options: WriteOptions = {}) =>
      client.call((api) =>
        api.records.action({
          params: { ...typeParams(businessObject), action },
          payload: new RunAction({ id }),
          headers: writeHeaders(options)
        })
      )
  }
}

/** Record values as a test writes them: any JSON object (the service checks them). */
type Values = Readonly<Record<string, unknown>>

/** Creates a record through the API and returns it. */
export const createRecord = (client: Client, businessObject: string, values: Values, draft = false) =>
  Effect.map(recordsOf(client, businessObject).create(values, { draft }), (answer) => answer.body).pipe(Effect.orDie)

/**
 * A page of a record's timeline (the newest without a cursor), as answered.
 * Its body as sent must be the contract's shape exactly: what decoding would
 * drop (an extra key, a `null` for an absent `record`) fails the test.
 */
export const timelineCall = (
  client: Client,
  businessObject: string,
  id: string,
  urlParams: { readonly limit?: number; readonly cursor?: string } = {}
) =>
  client
    .call((api) =>
      api.audit.timeline({
        params: timelinePath(businessObject, id),
        query: { limit: timelineDefaultLimit, ...urlParams }
      })
    )
    .pipe(
      Effect.tap((answer) =>
        Effect.sync(() => expect(answer.json).toEqual(Schema.encodeSync(TimelinePage)(answer.body)))
      )
    )

/** A page of a record's timeline (the newest without a cursor). */
export const timelineOf = (
  client: Client,
  businessObject: string,
  id: string,
  urlParams: { readonly limit?: number; readonly cursor?: string } = {}
): Effect.Effect<TimelinePage> =>
  Effect.map(timelineCall(client, businessObject, id, urlParams), (answer) => answer.body).pipe(Effect.orDie)
