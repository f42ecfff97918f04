import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../api/Api"

const build = (baseUrl: string) =>
  HttpApiClient.make(Api, {
    baseUrl: baseUrl === "" ? undefined : baseUrl,
    // No trace headers: a `traceparent` would make every cross-origin call preflighted, for nothing.
    transformClient: (client) =>
      client.pipe(HttpClient.mapRequest(HttpClientRequest.acceptJson), HttpClient.withTracerPropagation(false))
  }).pipe(Effect.provide(FetchHttpClient.layer))

/**
 * The contract's own client: one method per endpoint of `Api`
 * (`api.records.get({ path })`, ...), which builds each route's path, query,
 * headers and body from the endpoint's schemas and decodes its declared
 * answer. It sends through `FetchHttpClient`, whose `fetch` and `RequestInit`
 * each call provides (transport.ts).
 */
export type ApiClient = Effect.Effect.Success<ReturnType<typeof build>>

/** Built once per client; `baseUrl` without a trailing slash ("" for the page's own origin). */
export const makeApiClient = (baseUrl: string): ApiClient => Effect.runSync(build(baseUrl))
