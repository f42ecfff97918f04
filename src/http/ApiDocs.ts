import type * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import { HttpRouter } from "effect/http"
import { Effect, Scope } from "effect"

export const docsPath = "/api/docs"

/**
 * The API reference at `/api/docs`: platform's `HttpApiSwagger` page, built
 * on its first request. Swagger UI is about 2 MB of JavaScript inlined into
 * the page; imported at start it held some 7 MB of the idle service's memory
 * (its source in the bundle, the script as a string, the encoded page) that
 * no API call uses. Imported here, it is a chunk of its own (apiDocsPage.ts),
 * read and rendered once.
 */
export const ApiDocsLive = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>
) =>
  HttpRouter.use((router) =>
    Effect.gen(function* () {
      // The page's own router lives as long as the server's.
      const scope = yield* Effect.scope
      const docs = yield* Effect.cached(
        Effect.promise(() => import("./apiDocsPage")).pipe(
          Effect.flatMap((page) => page.docsHandler(api, docsPath)),
          Scope.provide(scope)
        )
      )
      yield* router.add("GET", docsPath, Effect.flatten(docs))
    })
  )
