import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { HttpServerResponse } from "effect/http"
import { Effect, Schema } from "effect"
import { createHash } from "node:crypto"
import { Access } from "../../auth/Access"
import { BusinessObjectGuard } from "../../auth/BusinessObjectGuard"
import { allows } from "../../auth/Grants"
import { ServedApi } from "../ServedApi"
import { BusinessObjectList, ListedBusinessObject } from "../../api/BusinessObjectsApi"
import { ifNoneMatchNames } from "../../api/EntityTag"
import { canonicalJson } from "../../idempotency/fingerprint"
import { PluginRegistry } from "../../plugins/PluginRegistry"

/** A strong ETag of a JSON body: its SHA-256 (canonical JSON, so key order does not count), shortened. */
const contentTag = (body: unknown) =>
  `"${createHash("sha256").update(canonicalJson(body)).digest("base64url").slice(0, 27)}"`

export const BusinessObjectsHttp = HttpApiBuilder.group(ServedApi, "businessObjects", (handlers) =>
  Effect.gen(function* () {
    const registry = yield* PluginRegistry
    const access = yield* Access
    const guard = yield* BusinessObjectGuard

    return handlers
      .handle("list", ({ headers }) =>
        Effect.gen(function* () {
          const grants = yield* access.grants
          const readable = registry.businessObjects.filter((definition) => allows(grants, definition.name, "read"))
          const readableNames = new Set(readable.map((definition) => definition.name))
          const { actors, jobs, listeners, actions } = registry.labels
          const list = new BusinessObjectList({
            // Actions are named by their business object: only those of readable ones are told.
            labels: {
              actors,
              jobs,
              listeners,
              actions: Object.fromEntries(
                Object.entries(actions).filter(([name]) => readableNames.has(name.slice(0, name.lastIndexOf("/"))))
              )
            },
            businessObjects: readable.map(
              (definition) =>
                new ListedBusinessObject({ ...definition, mayUpdate: allows(grants, definition.name, "update") })
            )
          })
          // Encoding a list built from the registry's own definitions cannot fail; if it did, that is a bug (a 500).
          const body = Schema.encodeSync(BusinessObjectList)(list)
          // Fetched once per page load and revalidated: the browser (or any client) sends its ETag back. The tag
          // covers `mayUpdate` too, so a changed grant is a new list.
          const validators = { etag: contentTag(body), "cache-control": "private, no-cache" }
          const known = headers["if-none-match"]
          return known !== undefined && ifNoneMatchNames(known, validators.etag)
            ? HttpServerResponse.empty({ status: 304, headers: validators })
            : HttpServerResponse.jsonUnsafe(body, { headers: validators })
        })
      )
      .handle("get", ({ params }) =>
        Effect.gen(function* () {
          const { registered } = yield* guard.require(params.businessObject, "read")
          return registered.definition
        })
      )
  })
)
