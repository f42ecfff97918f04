import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import * as HttpApiClient from "effect/http-api/HttpApiClient"
import { Effect } from "effect"
import { Api } from "../api/Api"

const build = (baseUrl: string) =>
  HttpApiClient.make(Api, {
    baseUrl: baseUrl === "" ? undefined : baseUrl,
    // Trace headers are turned off per call (transport.ts).
    transformClient: HttpClient.mapRequest(HttpClientRequest.acceptJson)
  }).pipe(Effect.provide(FetchHttpClient.layer))

/**
 * The contract's own client: one method per endpoint of `Api`
 * (`api.records.get({ path })`, ...), which builds each route's path, query,
 * headers and body from the endpoint's schemas and decodes its declared
 * answer. It sends through `FetchHttpClient`, whose `fetch` and `RequestInit`
 * each call provides (transport.ts).
 */
export type ApiClient = Effect.Success<ReturnType<typeof build>>

/** Built once per client; `baseUrl` without a trailing slash ("" for the page's own origin). */
export const makeApiClient = (baseUrl: string): ApiClient => Effect.runSync(build(baseUrl))
