import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { Schema } from "effect"
import { Authenticated } from "./AuthMiddleware"
import { apiErrors, BadRequest, Conflict, Forbidden, NotFound, UnprocessableEntity } from "./errors"

/** A member of the workspace: a user and the roles they hold in it. */
export class Member extends Schema.Class<Member>("Member")({
  userId: Schema.String,
  email: Schema.String,
  name: Schema.String,
  roles: Schema.Array(Schema.String)
}) {}

export class MemberList extends Schema.Class<MemberList>("MemberList")({
  members: Schema.Array(Member)
}) {}

/** The one role the member holds afterwards (the roles held before are replaced). */
export class SetMemberRole extends Schema.Class<SetMemberRole>("SetMemberRole")({
  role: Schema.String
}) {}

const MemberPath = { userId: Schema.String }

/**
 * The workspace's members, for its admins (holders of the built-in `admin`
 * role): everyone else gets 403. A change ends the member's open broadcast
 * streams on every instance (docs/broadcast.md, "The stream contract").
 */
export class MembersApi extends HttpApiGroup.make("members")
  .add(
    HttpApiEndpoint.get("list", "/members", {
      success: MemberList,
      error: [...apiErrors, Forbidden]
    }).annotate(OpenApi.Summary, "The workspace's members and their roles; admins only")
  )
  .add(
    HttpApiEndpoint.delete("remove", "/members/:userId", {
      params: MemberPath,
      success: HttpApiSchema.NoContent,
      error: [...apiErrors, Forbidden, NotFound, Conflict]
    }).annotate(
      OpenApi.Summary,
      "Remove a member: their roles and sessions in this workspace go, their open streams end; admins only; " +
        "404 for a user who is not a member, 409 for the last admin"
    )
  )
  .add(
    HttpApiEndpoint.put("setRole", "/members/:userId/role", {
      params: MemberPath,
      payload: SetMemberRole,
      success: Member,
      error: [...apiErrors, BadRequest, Forbidden, NotFound, Conflict, UnprocessableEntity]
    }).annotate(
      OpenApi.Summary,
      "Make a member hold exactly this role (their open streams end and reopen with the new rights); admins only; " +
        "404 for a user who is not a member, 422 for a role the workspace does not have, 409 when it would leave no admin"
    )
  )
  .middleware(Authenticated) {}
