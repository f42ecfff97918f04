import { Schema } from "effect"

export const Permission = Schema.Literals(["read", "update"])
export type Permission = typeof Permission.Type

/** A grant names a business object (`<namespace>/<name>`), or `*` for all of them. */
export const GrantTarget = Schema.String.check(
  Schema.isPattern(/^(\*|[a-z][a-z0-9-]*\/[a-z][a-zA-Z0-9-]*)$/, {
    message: "a business object is <namespace>/<name> (e.g. crm/deal), or * for all"
  })
)

export interface Grant {
  readonly businessObject: string
  readonly permission: Permission
}

/**
 * Whether a set of grants allows `permission` on `businessObject`. Whoever
 * may update a business object may also read it.
 */
export const allows = (grants: ReadonlyArray<Grant>, businessObject: string, permission: Permission): boolean =>
  grants.some(
    (grant) =>
      (grant.businessObject === businessObject || grant.businessObject === "*") &&
      (grant.permission === permission || grant.permission === "update")
  )

/**
 * The business objects a set of grants lets its holder read, for a query
 * that keeps only those rows: "all" with a grant on `*`.
 */
export const readableBusinessObjects = (grants: ReadonlyArray<Grant>): "all" | ReadonlyArray<string> =>
  grants.some((grant) => grant.businessObject === "*")
    ? "all"
    : [...new Set(grants.map((grant) => grant.businessObject))].sort()
