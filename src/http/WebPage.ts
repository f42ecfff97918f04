import { HttpPlatform, HttpRouter, HttpServerError, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Effect, FileSystem, Option } from "effect"
import * as NodePath from "node:path"
import { WebRoot } from "./WebRoot"

/** Hashed build output may be cached for good; everything else is revalidated. */
const cacheControl = (pathname: string) =>
  pathname.startsWith("/assets/") ? "public, max-age=31536000, immutable" : "no-cache"

const notBuilt = HttpServerResponse.text(
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Web page not built</title></head>
<body><h1>The web page has not been built</h1>
<p>Run <code>npm run build:web</code> (<code>npm start</code> does it before starting) and reload.
The API is served under <a href="/api/docs"><code>/api</code></a> all the same.</p></body></html>`,
  { status: 503, contentType: "text/html; charset=utf-8" }
)

/** The request's path, percent-decoded; none when it does not decode. */
const pathnameOf = (url: string): Option.Option<string> => {
  try {
    return Option.some(decodeURIComponent(new URL(url, "http://localhost").pathname))
  } catch {
    return Option.none()
  }
}

/** The file under `root` that `pathname` names; none when it would leave `root`. */
const fileUnder = (root: string, pathname: string): Option.Option<string> => {
  const file = NodePath.resolve(root, `.${pathname}`)
  return file.startsWith(root + NodePath.sep) ? Option.some(file) : Option.none()
}

/**
 * Serves the built web page on every GET outside `/api`: a file of the build
 * when one matches the path, otherwise `index.html`, so that the page's own
 * routes (`/records/crm/deal/<id>`) survive a reload. A path that names a
 * file (it has an extension) and matches none is a 404, and so is every
 * unknown `/api` route: those stay the API's JSON 404. With no build the page
 * answers 503 with what to run.
 */
export const WebPageLive = HttpRouter.use((router) =>
  Effect.gen(function* () {
    const root = NodePath.resolve(yield* WebRoot)
    const index = NodePath.join(root, "index.html")
    const fs = yield* FileSystem.FileSystem
    const platform = yield* HttpPlatform.HttpPlatform
    const handler = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const notFound = new HttpServerError.HttpServerError({ reason: new HttpServerError.RouteNotFound({ request }) })
      const decoded = pathnameOf(request.url)
      if (Option.isNone(decoded)) return yield* notFound
      const pathname = decoded.value
      if (pathname === "/api" || pathname.startsWith("/api/")) return yield* notFound
      const file = Option.getOrUndefined(fileUnder(root, pathname))
      const info =
        file === undefined ? undefined : yield* fs.stat(file).pipe(Effect.option, Effect.map(Option.getOrUndefined))
      if (file !== undefined && info?.type === "File") {
        return yield* platform.fileResponse(file, { headers: { "cache-control": cacheControl(pathname) } })
      }
      if (NodePath.extname(pathname) !== "") return yield* notFound
      if (!(yield* fs.exists(index).pipe(Effect.orElseSucceed(() => false)))) return notBuilt
      return yield* platform.fileResponse(index, { headers: { "cache-control": "no-cache" } })
    })
    yield* router.add("GET", "/*", handler)
  })
)
