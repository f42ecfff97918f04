import * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import { Context, Option } from "effect"
import { MaxBodyBytes } from "../api/MaxBodyBytes"

/** What the edge must know of a route before its handler runs. */
export interface RouteBody {
  /** The endpoint's path as declared (`/api/records/:namespace/:name`): the route's name in metrics. */
  readonly template: string
  /** The route decodes a JSON payload. */
  readonly hasPayload: boolean
  /** The names of its path parameters, by segment (`undefined` for a static segment). */
  readonly params: ReadonlyArray<string | undefined>
  /** Its own limit; none means the configured default. */
  readonly maxBodyBytes: Option.Option<number>
}

interface Entry extends RouteBody {
  readonly method: string
  /** Path segments; `undefined` stands for a `:param`. */
  readonly segments: ReadonlyArray<string | undefined>
}

const segmentsOf = (pathname: string) => pathname.split("/").filter((segment) => segment.length > 0)

/**
 * The routes of an `HttpApi` by method and path, for the request guard that
 * runs before the router: which ones take a body, and how large. A static
 * segment beats a parameter where both match.
 */
export const routeTable = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>
) => {
  const entries: Array<Entry> = []
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, mergedAnnotations }) => {
      const segments = segmentsOf(endpoint.path)
      entries.push({
        template: endpoint.path,
        method: endpoint.method,
        segments: segments.map((segment) => (segment.startsWith(":") ? undefined : segment)),
        params: segments.map((segment) => (segment.startsWith(":") ? segment.slice(1) : undefined)),
        hasPayload: endpoint.payload.size > 0,
        maxBodyBytes: Option.orElse(Context.getOption(endpoint.annotations, MaxBodyBytes), () =>
          Context.getOption(mergedAnnotations, MaxBodyBytes)
        )
      })
    }
  })

  // By method and segment count, most static segments first: the first match is the best one.
  const candidates = new Map<string, Array<Entry>>()
  for (const entry of entries) {
    const key = `${entry.method} ${entry.segments.length}`
    candidates.set(key, [...(candidates.get(key) ?? []), entry])
  }
  const staticsOf = (entry: Entry) => entry.segments.filter((segment) => segment !== undefined).length
  for (const list of candidates.values()) list.sort((a, b) => staticsOf(b) - staticsOf(a))

  /** The route `method` and the raw (still percent-encoded) `pathname` reach, if any. */
  return (method: string, pathname: string): Option.Option<RouteBody> => {
    const segments = segmentsOf(pathname)
    const list = candidates.get(`${method} ${segments.length}`)
    if (list === undefined) return Option.none()
    return Option.fromUndefinedOr(
      list.find((entry) => entry.segments.every((segment, i) => segment === undefined || segment === segments[i]))
    )
  }
}
