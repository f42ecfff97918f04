import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Access } from "../../auth/Access"
import { BusinessObjectGuard } from "../../auth/BusinessObjectGuard"
import { allows } from "../../auth/Grants"
import { Api } from "../../api/Api"
import { BusinessObjectList } from "../../api/BusinessObjectsApi"
import { PluginRegistry } from "../../plugins/PluginRegistry"

export const BusinessObjectsHttp = HttpApiBuilder.group(Api, "businessObjects", (handlers) =>
  Effect.gen(function* () {
    const registry = yield* PluginRegistry
    const access = yield* Access
    const guard = yield* BusinessObjectGuard

    return handlers
      .handle("list", () =>
        Effect.map(
          access.grants,
          (grants) =>
            new BusinessObjectList({
              businessObjects: registry.businessObjects.filter((definition) => allows(grants, definition.name, "read"))
            })
        )
      )
      .handle("get", ({ path }) =>
        Effect.gen(function* () {
          const { registered } = yield* guard.require(path.businessObject, "read")
          return registered.definition
        })
      )
  })
)
