import type * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSwagger from "effect/http-api/HttpApiSwagger"
import { HttpRouter } from "effect/http"

/** The docs page as platform's `HttpApiSwagger` renders it, on a router of its own (loaded by ApiDocs.ts). */
export const docsHandler = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>,
  path: `/${string}`
) => HttpRouter.toHttpEffect(HttpApiSwagger.layer(api, { path }))
