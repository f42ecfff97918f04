import { Context, Effect, Layer } from "effect"
import { Forbidden } from "../api/errors"
import { allows } from "./Grants"
import type { Permission } from "./Grants"
import { CurrentPrincipal } from "../api/Principal"
import { Roles } from "./Roles"
import { excerpt } from "../messages/inputExcerpt"

/** Permission checks for the current principal, from the grants of its roles. */
export class Access extends Context.Service<Access>()("Access", {
  make: Effect.gen(function* () {
    const roles = yield* Roles

    /** The current principal's grants, read from the workspace schema. */
    const grants = CurrentPrincipal.use((principal) => roles.grantsOf(principal.workspace, principal))

    const can = (businessObject: string, permission: Permission) =>
      Effect.map(grants, (held) => allows(held, businessObject, permission))

    /** Fails with 403 unless the current principal may `permission` the business object. */
    const require = (businessObject: string, permission: Permission) =>
      Effect.gen(function* () {
        if (yield* can(businessObject, permission)) return
        const principal = yield* CurrentPrincipal
        return yield* new Forbidden({
          message: `${principal.kind} ${principal.name} may not ${permission} ${excerpt(businessObject)}`
        })
      })

    return { grants, can, require } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make).pipe(Layer.provide(Roles.layer))
}
