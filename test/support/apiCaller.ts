import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { Data, Effect } from "effect"
import { Api } from "../../src/api/Api"
import { typeParams } from "../../src/client/pathParams"

/** A 2xx answer: the status the route declares and its body, decoded by the route's success schema. */
export interface Answer<A> {
  readonly status: number
  readonly headers: Headers
  readonly body: A
  /** The body as sent (parsed JSON), for tests of the wire shape itself. */
  readonly json: unknown
}

/** Any other answer: its status, headers and JSON body as sent (an error body `{_tag, message, ...}`). */
export class Refusal extends Data.TaggedError("Refusal")<{
  readonly method: string
  readonly url: string
  readonly status: number
  readonly headers: Headers
  readonly body: unknown
}> {
  override get message() {
    return `${this.method} ${this.url} answered ${this.status}: ${JSON.stringify(this.body)}`
  }
}

const build = (base: string, headers: Readonly<Record<string, string>>) =>
  HttpApiClient.make(Api, {
    baseUrl: base,
    transformClient: (client) =>
      client.pipe(
        HttpClient.mapRequest(HttpClientRequest.setHeaders(headers)),
        HttpClient.transformResponse(Effect.provideService(HttpClient.TracerPropagationEnabled, false))
      )
  }).pipe(Effect.provide(FetchHttpClient.layer))

/** The contract's client (`HttpApiClient` over `Api`): one method per endpoint, requests built from its schemas. */
export type ApiClient = Effect.Success<ReturnType<typeof build>>

/**
 * Calls one endpoint of the contract: `call((api) => api.records.get({ path: recordPath(deal, id), urlParams: {} }))`.
 * Succeeds with the 2xx answer, fails with the `Refusal` of any other; a
 * request that cannot be built or an answer that does not decode is a defect.
 */
export type Call = <A, E>(request: (api: ApiClient) => Effect.Effect<A, E>) => Effect.Effect<Answer<A>, Refusal>

interface Received {
  readonly method: string
  readonly url: string
  readonly response: Response
  readonly text: string
}

const parsed = (text: string): unknown => {
  try {
    return text.length > 0 ? JSON.parse(text) : undefined
  } catch {
    return text
  }
}

/**
 * The tests' typed caller of the service at `base`, sending `headers` on
 * every request (a session cookie, an API key, `Origin`): each route's path,
 * method, query, headers and body come from the contract as they do in the
 * client, never from a hand-written URL.
 */
export const apiCaller = (base: string, headers: Readonly<Record<string, string>> = {}): Call => {
  const api = Effect.runSync(build(base, headers))
  return (request) =>
    Effect.suspend(() => {
      let received: Received | undefined
      const recording: typeof fetch = async (input, init) => {
        const response = await fetch(input, init)
        const text = await response.clone().text()
        received = { method: init?.method ?? "GET", url: String(input), response, text }
        return response
      }
      return request(api).pipe(
        Effect.provideService(FetchHttpClient.Fetch, recording),
        Effect.matchEffect({
          onSuccess: (body) =>
            received === undefined
              ? Effect.die(new Error("an answer without a request"))
              : Effect.succeed({
                  status: received.response.status,
                  headers: received.response.headers,
                  body,
                  json: parsed(received.text)
                }),
          onFailure: (error) =>
            received === undefined || received.response.ok
              ? Effect.die(error)
              : Effect.fail(
                  new Refusal({
                    method: received.method,
                    url: received.url,
                    status: received.response.status,
                    headers: received.response.headers,
                    body: parsed(received.text)
                  })
                )
        })
      )
    })
}

/** The refusal a call must meet (a 2xx answer fails the test). */
export const refusal = <A>(call: Effect.Effect<Answer<A>, Refusal>): Effect.Effect<Refusal> =>
  call.pipe(
    Effect.flatMap((answer) =>
      Effect.die(new Error(`expected a refusal, got ${answer.status}: ${JSON.stringify(answer.body)}`))
    ),
    Effect.catchTag("Refusal", Effect.succeed)
  )

/** The answer whatever its status: for tests that accept several outcomes. */
export const settled = <A>(call: Effect.Effect<Answer<A>, Refusal>): Effect.Effect<Answer<A> | Refusal> =>
  Effect.catchTag(call, "Refusal", Effect.succeed)

/** The body as sent (parsed JSON), of an answer or a refusal. */
export const bodyAsSent = (response: Answer<unknown> | Refusal): unknown =>
  response instanceof Refusal ? response.body : response.json

// Path parameters go to the client as they are: v4's HttpApiClient percent-encodes each one itself.

/** The `namespace`/`name` path parameters of a business object `<namespace>/<name>`. */
export const typePath = (businessObject: string) => typeParams(businessObject)

/** The path parameters of one record. */
export const recordPath = (businessObject: string, id: string) => ({ ...typeParams(businessObject), id })

/** The path parameters of a record's timeline (the business object whole, in one segment). */
export const timelinePath = (businessObject: string, id: string) => ({ businessObject, id })
