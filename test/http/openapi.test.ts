import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { HttpRouter } from "effect/http"
import { NodeHttpServer } from "@effect/platform-node"
import { compileErrors, validate } from "@readme/openapi-parser"
import { expect, layer } from "@effect/vitest"
import { Context, Effect, Layer, Logger, Option, Schema } from "effect"
import { createServer } from "node:http"
import { InternalError } from "../../src/api/errors"
import { Api } from "../../src/api/Api"
import { errorResponses } from "../../src/http/ErrorResponses"
import { edge } from "../../src/http/Edge"
import { baseUrl, TestApp } from "../support/TestApp"
import { crm } from "../../src/plugins/crm"
import { PluginRegistry } from "../../src/plugins/PluginRegistry"
import { request } from "../support/http"

/**
 * Every route of `Api` as `METHOD /path`, with `:param` written `{param}` as
 * OpenAPI does; `excluded`: those marked `OpenApi.Exclude` instead.
 */
const routesOf = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>,
  excluded = false
) => {
  const routes: Array<{ method: string; path: string }> = []
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, mergedAnnotations }) => {
      if (Context.get(mergedAnnotations, OpenApi.Exclude) !== excluded) return
      routes.push({ method: endpoint.method.toLowerCase(), path: endpoint.path.replace(/:(\w+)/g, "{$1}") })
    }
  })
  return routes
}

type Document = {
  readonly openapi: string
  readonly paths: Record<string, Record<string, Operation>>
  readonly servers?: ReadonlyArray<{ readonly url: string }>
  readonly components: { readonly schemas: Record<string, JsonSchema> }
}

/** The parts of the document's JSON the tests read. */
interface JsonSchema {
  readonly $ref?: string
  readonly type?: string
  readonly required?: ReadonlyArray<string>
  readonly properties?: Record<string, JsonSchema>
  readonly items?: JsonSchema
  readonly anyOf?: ReadonlyArray<JsonSchema>
  readonly enum?: ReadonlyArray<unknown>
}
interface Operation {
  readonly summary?: string
  readonly parameters: ReadonlyArray<{ readonly name: string; readonly in: string; readonly schema: JsonSchema }>
  readonly requestBody?: { readonly content: { readonly "application/json": { readonly schema: JsonSchema } } }
  readonly responses: Record<
    string,
    {
      readonly content?: { readonly "application/json": { readonly schema: JsonSchema } }
      readonly headers?: Record<string, unknown>
    }
  >
}

/** The routes of the records group name their business object: the document lists each object's own. */
const recordsRoute = /^\/api\/(records|actions)\/\{namespace\}\/\{name\}/

/** The routes the served document must list: those of `Api`, the records routes once per business object (and action). */
const documentedRoutes = (objects: ReadonlyArray<{ readonly name: string; readonly actions: ReadonlyArray<string> }>) =>
  routesOf(Api).flatMap(({ method, path }) =>
    recordsRoute.test(path)
      ? objects.flatMap((object) => {
          const objectPath = path.replace("{namespace}/{name}", object.name)
          return objectPath.includes("{action}")
            ? object.actions.map((action) => ({ method, path: objectPath.replace("{action}", action) }))
            : [{ method, path: objectPath }]
        })
      : [{ method, path }]
  )

const componentName = (schema: JsonSchema | undefined) => schema?.$ref?.replace("#/components/schemas/", "")
const jsonBody = (operation: Operation | undefined, status: number) =>
  operation?.responses[status]?.content?.["application/json"].schema

const fetchDocument = Effect.gen(function* () {
  const base = yield* baseUrl
  const response = yield* request(`${base}/api/openapi.json`)
  expect(response.status).toBe(200)
  expect(response.headers.get("content-type")).toMatch(/^application\/json/)
  return response.body as Document
})

const validateDocument = (document: unknown) =>
  Effect.promise(async () => {
    // `validate` resolves $refs in place: give it a copy.
    const result = await validate(structuredClone(document) as Parameters<typeof validate>[0])
    return { result, errors: result.valid ? "" : compileErrors(result) }
  })

layer(TestApp, { excludeTestServices: true })("the OpenAPI document and the docs page", (it) => {
  it.effect("GET /api/openapi.json is a valid OpenAPI 3.1 document", () =>
    Effect.gen(function* () {
      const document = yield* fetchDocument
      expect(document.openapi).toMatch(/^3\.1\.\d+$/)
      const { errors, result } = yield* validateDocument(document)
      expect(errors).toBe("")
      expect(result).toEqual(expect.objectContaining({ valid: true, specification: "OpenAPI" }))
    })
  )

  it.effect("the validator is not a rubber stamp: it refuses the document without its info object", () =>
    Effect.gen(function* () {
      const document = yield* fetchDocument
      const broken: Partial<Document> & { info?: unknown } = structuredClone(document)
      delete broken.info
      const { result } = yield* validateDocument(broken)
      expect(result.valid).toBe(false)
    })
  )

  it.effect("it lists every route of the Api definition (records routes per business object), and nothing else", () =>
    Effect.gen(function* () {
      const document = yield* fetchDocument
      const routes = documentedRoutes((yield* PluginRegistry).businessObjects)
      expect(routes.length).toBeGreaterThanOrEqual(6)
      for (const { method, path } of routes) {
        expect(Object.keys(document.paths), path).toContain(path)
        expect(Object.keys(document.paths[path] ?? {}), `${method} ${path}`).toContain(method)
      }
      const listed = Object.entries(document.paths).flatMap(([path, item]) =>
        Object.keys(item)
          .filter((key) => ["get", "put", "post", "delete", "options", "head", "patch", "trace"].includes(key))
          .map((method) => `${method} ${path}`)
      )
      expect(listed.sort()).toEqual(routes.map(({ method, path }) => `${method} ${path}`).sort())
    })
  )

  it.effect("the records routes are typed per business object, from its field definitions", () =>
    Effect.gen(function* () {
      const document = yield* fetchDocument
      const { schemas } = document.components
      const dealRoute = document.paths["/api/records/crm/deal/{id}"]
      const update = dealRoute?.patch
      expect(componentName(update?.requestBody?.content["application/json"].schema)).toBe("crm.deal.UpdateRecord")
      expect(componentName(schemas["crm.deal.UpdateRecord"]?.properties?.values)).toBe("crm.deal.ValuesInput")
      const fields = Object.keys(crm.businessObjects.deal?.fields ?? {})
      expect(Object.keys(schemas["crm.deal.ValuesInput"]?.properties ?? {})).toEqual(fields)
      expect(Object.keys(schemas["crm.deal.Values"]?.properties ?? {})).toEqual(fields)
      // Sent, a line item may come without an id; served, each has one.
      const sentItems = schemas["crm.deal.ValuesInput"]?.properties?.lineItems?.anyOf?.[0]?.items
      expect([sentItems?.required, Object.keys(sentItems?.properties ?? {})]).toEqual([
        [],
        ["id", "product", "quantity", "price"]
      ])
      expect(schemas["crm.deal.Values"]?.properties?.lineItems?.items?.required).toEqual(["id"])
      expect(schemas["crm.deal.Values"]?.properties?.amount).toEqual(
        expect.objectContaining({ type: "string", pattern: expect.any(String) })
      )

      // Answers: the object's record with its ETag; a stale If-Match is a 412 with the entries since.
      // One record, or with asOf the record as it was (no ETag: a past version is not one to write on).
      expect(jsonBody(dealRoute?.get, 200)?.anyOf?.map(componentName)).toEqual([
        "crm.deal.Record",
        "crm.deal.RecordAsOf"
      ])
      expect(Object.keys(dealRoute?.get?.responses[200]?.headers ?? {})).toEqual(["ETag"])
      expect(dealRoute?.get?.parameters.map((parameter) => parameter.name)).toEqual(["id", "asOf"])
      expect(schemas["crm.deal.RecordAsOf"]?.properties?.values).toEqual({
        $ref: "#/components/schemas/crm.deal.Values"
      })
      expect(schemas["crm.deal.RecordAsOf"]?.required).toEqual([
        "id",
        "businessObject",
        "state",
        "version",
        "values",
        "entry"
      ])
      const revert = document.paths["/api/records/crm/deal/{id}/revert"]?.post
      // The body's schema, inline or (as effect 4 writes a class) its component.
      const revertBody = revert?.requestBody?.content["application/json"].schema
      const revertName = componentName(revertBody)
      const revertSchema = revertName === undefined ? revertBody : schemas[revertName]
      expect(Object.keys(revertSchema?.properties ?? {})).toEqual(["entry", "mode", "force"])
      expect(JSON.stringify(jsonBody(revert, 409))).toContain("#/components/schemas/ChangedSince")
      for (const [operation, status] of [
        [revert, 200],
        [update, 200],
        [document.paths["/api/records/crm/deal"]?.post, 201],
        [document.paths["/api/records/crm/deal/{id}/archive"]?.post, 200],
        [document.paths["/api/actions/crm/deal/close"]?.post, 200]
      ] as const) {
        expect(componentName(jsonBody(operation, status))).toBe("crm.deal.Record")
        expect(Object.keys(operation?.responses[status]?.headers ?? {})).toEqual(["ETag"])
      }
      expect(schemas["crm.deal.Record"]?.properties?.values).toEqual({ $ref: "#/components/schemas/crm.deal.Values" })
      expect(schemas["crm.deal.Record"]?.required).toContain("version")
      expect(componentName(jsonBody(update, 412))).toBe("PreconditionFailed")
      expect(update?.parameters.map((parameter) => parameter.name)).toEqual(["id", "idempotency-key", "if-match"])
      expect(document.paths["/api/records/crm/deal"]?.post?.parameters.map((parameter) => parameter.name)).toEqual([
        "idempotency-key"
      ])
      expect(componentName(jsonBody(document.paths["/api/records/crm/company"]?.get, 200))).toBe(
        "crm.company.RecordList"
      )
      expect(document.paths["/api/actions/crm/deal/close"]?.post?.summary).toMatch(/Mark the deal as won/)
    })
  )

  it.effect("the create bodies are typed per business object, as the update bodies are", () =>
    Effect.gen(function* () {
      const document = yield* fetchDocument
      const { schemas } = document.components
      for (const object of (yield* PluginRegistry).businessObjects) {
        const prefix = object.name.replace("/", ".")
        const create = document.paths[`/api/records/${object.name}`]?.post
        const body = create?.requestBody?.content["application/json"].schema
        expect(componentName(body), object.name).toBe(`${prefix}.CreateRecord`)
        const createSchema = schemas[`${prefix}.CreateRecord`]
        expect(componentName(createSchema?.properties?.values), object.name).toBe(`${prefix}.ValuesInput`)
        expect(Object.keys(createSchema?.properties ?? {})).toEqual(["values", "draft"])
        expect(createSchema?.required).toEqual(["values"])
      }
      // No body anywhere is left with the generic, untyped values map.
      expect(JSON.stringify(document.paths)).not.toContain("#/components/schemas/ValuesInput")
    })
  )

  it.effect("limit is an integer, the document names its server, and the business objects list its 304", () =>
    Effect.gen(function* () {
      const document = yield* fetchDocument
      for (const path of ["/api/records/crm/deal", "/api/audit/business-object/{businessObject}/{id}"]) {
        const limit = document.paths[path]?.get?.parameters.find((parameter) => parameter.name === "limit")
        expect(limit?.schema.type, path).toBe("integer")
      }
      expect(document.servers).toEqual([expect.objectContaining({ url: "/" })])
      const list = document.paths["/api/business-objects"]?.get
      expect(Object.keys(list?.responses ?? {})).toContain("304")
      expect(Object.keys(list?.responses[200]?.headers ?? {})).toEqual(["ETag"])
      expect(list?.parameters.map((parameter) => parameter.name)).toEqual(["if-none-match"])
    })
  )

  it.effect("the engine's write route is internal: not in the document, nor in the docs page", () =>
    Effect.gen(function* () {
      const document = yield* fetchDocument
      expect(routesOf(Api, true)).toEqual([{ method: "post", path: "/api/engine/workspaces/{workspace}/writes" }])
      expect(Object.keys(document.paths).filter((path) => path.includes("engine"))).toEqual([])
      const docs = yield* request(`${yield* baseUrl}/api/docs`)
      expect(String(docs.body)).not.toContain("/api/engine/")
    })
  )

  it.effect("GET /api/docs answers 200 with an HTML page", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const response = yield* request(`${base}/api/docs`)
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toMatch(/^text\/html/)
      expect(String(response.body)).toMatch(/<html/i)
    })
  )

  // Other paths outside /api without an extension are the web page's (test/http/web-page.test.ts).
  it.effect("an unknown route answers a JSON 404", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      for (const path of ["/api/no-such-route", "/nothing-here.txt", "/api/auth/me/extra"]) {
        const response = yield* request(`${base}${path}`)
        expect(response.status, path).toBe(404)
        expect(response.body, path).toEqual({
          _tag: "NotFound",
          message: `no route for GET ${JSON.stringify(path)}`,
          requestId: expect.any(String)
        })
      }
      expect((yield* request(`${base}/api/health`, { method: "DELETE" })).status).toBe(404)
    })
  )
})

// A test-only API whose handlers break, served through the service's own edge.

class Broken extends HttpApiGroup.make("broken").add(
  HttpApiEndpoint.get("defect", "/defect", { success: Schema.String, error: InternalError }),
  HttpApiEndpoint.get("thrown", "/thrown", { success: Schema.String, error: InternalError }),
  HttpApiEndpoint.get("fine", "/fine", { success: Schema.String, error: InternalError })
) {}

class BrokenApi extends HttpApi.make("broken").add(Broken) {}

const secret = "password=hunter2 at /srv/secret/Handler.ts:42"

const BrokenHandlers = HttpApiBuilder.group(BrokenApi, "broken", (handlers) =>
  handlers
    .handle("defect", () => Effect.die(new Error(secret)))
    .handle("thrown", () =>
      Effect.sync((): string => {
        throw new TypeError(secret)
      })
    )
    .handle("fine", () => Effect.succeed("ok"))
)

/** The messages of the lines logged at ERROR, to check the cause stays on the server. */
class ErrorLog extends Context.Service<ErrorLog, ReadonlyArray<string>>()("test/ErrorLog") {}

const CollectedErrors = Layer.unwrap(
  Effect.sync(() => {
    const lines: Array<string> = []
    const collector = Logger.make<unknown, void>((options) => {
      if (options.logLevel === "Error") lines.push(Logger.formatLogFmt.log(options))
    })
    return Layer.merge(Layer.succeed(ErrorLog, lines), Logger.layer([collector]))
  })
)

/** The service's own edge and error answers, around the test API's routes, as Server.ts puts them. */
const outer = edge({ hstsMaxAge: Option.none() })

const BrokenServer = HttpRouter.serve(
  Layer.mergeAll(
    HttpApiBuilder.layer(BrokenApi).pipe(Layer.provide(BrokenHandlers)),
    HttpRouter.middleware((app) => outer(errorResponses(app)), { global: true })
  ),
  { disableLogger: true }
).pipe(
  Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
  Layer.provideMerge(CollectedErrors)
)

layer(BrokenServer, { excludeTestServices: true })("a handler defect", (it) => {
  it.effect("answers 500 and tells the client nothing of the cause, which is logged on the server", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const errors = yield* ErrorLog
      expect((yield* request(`${base}/fine`)).body).toBe("ok")
      for (const path of ["/defect", "/thrown"]) {
        const before = errors.length
        const response = yield* request(`${base}${path}`)
        expect(response.status, path).toBe(500)
        expect(JSON.stringify(response.body) ?? "").not.toContain("hunter2")
        expect([...response.headers.values()].join(" ")).not.toContain("hunter2")
        const logged = errors.slice(before)
        expect(logged).toHaveLength(1)
        expect(logged[0]).toContain("unhandled defect")
        expect(logged[0]).toContain(secret)
      }
    })
  )

  it.effect("the 500 body is exactly { _tag: InternalError, message: internal error, requestId }", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      for (const path of ["/defect", "/thrown"]) {
        const response = yield* request(`${base}${path}`)
        expect(response.status, path).toBe(500)
        expect(response.body).toStrictEqual({
          _tag: "InternalError",
          message: "internal error",
          requestId: expect.any(String)
        })
        expect(response.headers.get("content-type")).toMatch(/^application\/json/)
      }
    })
  )
})
