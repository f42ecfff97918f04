import { Context, Effect, Layer, Option } from "effect"
import { NotFound } from "../api/errors"
import { PluginRegistry } from "../plugins/PluginRegistry"
import { Access } from "./Access"
import type { Permission } from "./Grants"
import { CurrentPrincipal } from "../api/Principal"
import { excerpt } from "../messages/inputExcerpt"

/**
 * The check in front of every business object route: 404 for a business
 * object no plugin declares, then 403 without the permission. Gives the
 * principal and the business object's registration on success.
 */
export class BusinessObjectGuard extends Context.Service<BusinessObjectGuard>()("BusinessObjectGuard", {
  make: Effect.gen(function* () {
    const access = yield* Access
    const registry = yield* PluginRegistry

    const require = (businessObject: string, permission: Permission) =>
      Effect.gen(function* () {
        const registered = registry.find(businessObject)
        if (Option.isNone(registered)) {
          return yield* new NotFound({ message: `unknown business object: ${excerpt(businessObject)}` })
        }
        yield* access.require(businessObject, permission)
        return { principal: yield* CurrentPrincipal, registered: registered.value }
      })

    return { require } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make).pipe(Layer.provide(Access.layer))
}
