import { HttpApi, HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"

export const docsPath = "/api/docs"

/**
 * The API reference at `/api/docs`: platform's `HttpApiSwagger` page, built
 * on its first request. Swagger UI is about 2 MB of JavaScript inlined into
 * the page; imported at start it held some 7 MB of the idle service's memory
 * (its source in the bundle, the script as a string, the encoded page) that
 * no API call uses. Imported here, it is a chunk of its own (apiDocsPage.ts),
 * read and rendered once.
 */
export const ApiDocsLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const api = yield* HttpApi.Api
    const docs = yield* Effect.cached(
      Effect.promise(() => import("./apiDocsPage")).pipe(Effect.flatMap((page) => page.docsRouter(api, docsPath)))
    )
    yield* router.get(docsPath, Effect.flatten(docs))
  })
)
