import { HttpApi } from "effect/http-api"
import type { HttpApiGroup } from "effect/http-api"
import { SchemaAST as AST } from "effect"
import { EngineApi } from "../../../src/api/EngineApi"
import { Api } from "../../../src/api/Api"

/** One route the hostile-input suite covers. */
export interface Route {
  /** `group.endpoint` for API routes, a short name for the others. */
  readonly key: string
  /** Fixed method, or "any" for the unknown-route probes (the fuzz picks one). */
  readonly method: string
  /** With `:param` segments, e.g. `/api/records/:namespace/:name`. */
  readonly path: string
  readonly params: ReadonlyArray<string>
  /** The endpoint reads a JSON body. */
  readonly hasPayload: boolean
  /** The endpoint reads query parameters. */
  readonly hasUrlParams: boolean
  /** The session cookie (or an API key) is how it authenticates. */
  readonly authenticated: boolean
  /** It takes an `If-Match` header (a write on one record). */
  readonly takesIfMatch: boolean
}

const paramsOf = (path: string) => [...path.matchAll(/:([A-Za-z]+)/g)].map((match) => match[1] ?? "")

/** The header names a headers schema declares. */
const headerNames = (headers: AST.AST | undefined): ReadonlyArray<PropertyKey> => {
  if (headers === undefined) return []
  const ast = AST.toEncoded(headers)
  return AST.isObjects(ast) ? ast.propertySignatures.map((member) => member.name) : []
}

const apiRoutes = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>
): Array<Route> => {
  const routes: Array<Route> = []
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ group, endpoint, middleware }) => {
      routes.push({
        key: `${group.identifier}.${endpoint.identifier}`,
        method: endpoint.method,
        path: endpoint.path,
        params: paramsOf(endpoint.path),
        hasPayload: endpoint.payload.size > 0,
        hasUrlParams: endpoint.query !== undefined,
        authenticated: [...middleware].some((tag) => tag.key === "Authenticated"),
        takesIfMatch: headerNames(endpoint.headers?.ast).includes("if-match")
      })
    }
  })
  return routes
}

/**
 * Every endpoint of the HttpApi definition, read from the definition itself,
 * so a route added to `Api` is fuzzed without touching this suite. The
 * engine's route is added from its own group should it leave `Api` (it is
 * to leave the OpenAPI document, not the server).
 */
export const endpointRoutes = (): ReadonlyArray<Route> => {
  const routes = apiRoutes(Api)
  for (const route of apiRoutes(HttpApi.make("engine").add(EngineApi).prefix("/api"))) {
    if (!routes.some((known) => known.method === route.method && known.path === route.path)) routes.push(route)
  }
  return routes
}

const page = (key: string, method: string, path: string): Route => ({
  key,
  method,
  path,
  params: paramsOf(path),
  hasPayload: false,
  hasUrlParams: false,
  authenticated: false,
  takesIfMatch: false
})

/** What the server answers outside the HttpApi definition: the web page, the docs, unknown routes. */
export const otherRoutes: ReadonlyArray<Route> = [
  page("web.index", "GET", "/"),
  page("web.pageRoute", "GET", "/records/:namespace/:name/:id"),
  page("web.asset", "GET", "/assets/:file"),
  page("docs.page", "GET", "/api/docs"),
  page("docs.openapi", "GET", "/api/openapi.json"),
  page("unknown.api", "any", "/api/:unknown"),
  page("unknown.page", "any", "/:unknown/:file")
]

export const stateChanging = (method: string) => !["GET", "HEAD", "OPTIONS"].includes(method.toUpperCase())

/** A route of the HttpApi definition (not the page, the docs or an unknown route). */
export const isApiRoute = (route: Route) =>
  !["web.", "unknown.", "docs."].some((prefix) => route.key.startsWith(prefix))
