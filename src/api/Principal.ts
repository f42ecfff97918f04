import { Context, Schema } from "effect"
import { Workspace } from "./Workspace"
import { omittable } from "./Json"

/** Who can hold roles: users, service accounts (API keys) and agents. */
export const PrincipalKind = Schema.Literals(["user", "service-account", "agent"])
export type PrincipalKind = typeof PrincipalKind.Type

/** How the request proved who it is. */
export const Credential = Schema.Union([
  Schema.TaggedStruct("Session", { tokenHash: Schema.String }),
  Schema.TaggedStruct("ApiKey", { keyId: Schema.String })
])
export type Credential = typeof Credential.Type

/** The authenticated caller of one request, bound to one workspace. */
export class Principal extends Schema.Class<Principal>("Principal")({
  kind: PrincipalKind,
  id: Schema.String,
  name: Schema.String,
  email: omittable(Schema.String),
  workspace: Workspace,
  credential: Credential
}) {}

/** The current request's principal, provided by the authentication middleware. */
export class CurrentPrincipal extends Context.Service<CurrentPrincipal, Principal>()("CurrentPrincipal") {}
