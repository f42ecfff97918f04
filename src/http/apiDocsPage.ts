import { HttpApi, HttpApiBuilder } from "@effect/platform"
import * as HttpApiSwagger from "@effect/platform/HttpApiSwagger"
import type { Context } from "effect"
import { Effect, Layer } from "effect"

/** The docs page as platform's `HttpApiSwagger` renders it, on a router of its own (loaded by ApiDocs.ts). */
export const docsRouter = (api: Context.Tag.Service<HttpApi.Api>, path: `/${string}`) =>
  HttpApiBuilder.Router.router.pipe(
    Effect.provide(
      HttpApiSwagger.layer({ path }).pipe(
        Layer.provideMerge(HttpApiBuilder.Router.Live),
        Layer.provide(Layer.succeed(HttpApi.Api, api))
      )
    )
  )
