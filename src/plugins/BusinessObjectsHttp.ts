import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { Access } from "../auth/Access"
import { allows } from "../auth/Grants"
import { NotFound } from "../errors"
import { Api } from "../http/Api"
import { BusinessObjectList } from "./BusinessObjectsApi"
import { PluginRegistry } from "./PluginRegistry"

export const BusinessObjectsHttp = HttpApiBuilder.group(Api, "businessObjects", (handlers) =>
  Effect.gen(function* () {
    const registry = yield* PluginRegistry
    const access = yield* Access

    return handlers
      .handle("list", () =>
        Effect.map(access.grants, (grants) =>
          new BusinessObjectList({
            businessObjects: registry.businessObjects.filter((definition) => allows(grants, definition.name, "read"))
          })
        )
      )
      .handle("get", ({ path }) =>
        Effect.gen(function* () {
          const found = registry.find(path.businessObject)
          if (Option.isNone(found)) {
            return yield* new NotFound({ message: `unknown business object: ${path.businessObject}` })
          }
          yield* access.require(found.value.definition.name, "read")
          return found.value.definition
        })
      )
  })
)
