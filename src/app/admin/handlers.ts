import { Console, Effect, Option, Redacted } from "effect"
import type { Workspace } from "../../api/Workspace"
import { Feed } from "../../audit/Feed"
import { feedStart } from "../../audit/FeedCursor"
import { Agents } from "../../agents/Agents"
import { ApiKeys } from "../../auth/ApiKeys"
import { NotFound } from "../../api/errors"
import { FailedWork } from "../../queue/FailedWork"
import { Members } from "../../auth/Members"
import { Roles } from "../../auth/Roles"
import { SignOuts } from "../../auth/SignOuts"
import { Users } from "../../auth/Users"
import { provisionWorkspace } from "../Provisioning"
import { Seeders } from "../../seeding/Seeders"
import type { SeedResult } from "../../seeding/Seeders"
import { Workspaces } from "../../tenancy/Workspaces"
import { requiredSecret } from "./CommandSecret"
import { confirm } from "./confirmation"
import { exportedLine, writeFeedFile } from "./feedFile"
import { table } from "./table"

/**
 * What each admin command does (commands.ts declares them). Loaded with the
 * services they use on the first command that runs, so that `--help` and
 * `--version` load neither.
 */

export { auditDigest } from "./auditDigest"
export { auditErase } from "./auditErase"
export { auditVerify } from "./auditVerify"
export { feedExport } from "./feedExport"
export { recordsImport } from "./recordsImport"

/** A listing, or one line saying there is nothing to list; its ids and emails (copied whole into the next command) are never broken over two lines. */
const printTable = (nothing: string, header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) =>
  Console.log(rows.length === 0 ? nothing : table(header, rows, ["ID", "USER ID", "EMAIL"]))

const listOf = (items: ReadonlyArray<string>) => (items.length === 0 ? "-" : items.join(","))

/** An instant as a listing shows it: to the minute, in UTC (`2026-11-23 09:41Z`). */
const minute = (date: Date) => `${date.toISOString().slice(0, 16).replace("T", " ")}Z`

const describeSeeding = (seeded: ReadonlyArray<SeedResult>) =>
  seeded.length === 0
    ? "no plugin has seed data"
    : `seed data: ${seeded.map((result) => `${result.plugin} ${result.written} new record${result.written === 1 ? "" : "s"}`).join(", ")}`

export const workspaceCreate = ({ name, slug }: { readonly name: Option.Option<string>; readonly slug: string }) =>
  Effect.gen(function* () {
    const { seeded, workspace } = yield* provisionWorkspace(slug, Option.getOrUndefined(name))
    yield* Console.log(`workspace ${workspace.slug} created (schema ${workspace.schema}, role admin holds every grant)`)
    yield* Console.log(describeSeeding(seeded))
  })

export const workspaceSeed = ({ slug }: { readonly slug: string }) =>
  Effect.gen(function* () {
    const workspace = yield* (yield* Workspaces).get(slug)
    yield* Console.log(describeSeeding(yield* (yield* Seeders).seedWorkspace(workspace)))
  })

export const workspaceList = Effect.gen(function* () {
  const all = yield* (yield* Workspaces).list
  yield* printTable(
    "no workspaces (create one: workspace create <slug>)",
    ["SLUG", "NAME", "SCHEMA", "ID"],
    all.map((workspace) => [workspace.slug, workspace.name, workspace.schema, workspace.id])
  )
})

const dropQuestion = (workspace: Workspace, exportTo: Option.Option<string>) =>
  [
    `This drops workspace ${workspace.slug} (${workspace.name}, schema ${workspace.schema}) for good:`,
    "its records, their timelines and its change feed, its members' access, API keys and agents.",
    "Its queued jobs and workflow runs are discarded; its sessions and open streams end on every instance.",
    ...Option.match(exportTo, {
      onNone: () => [],
      onSome: (file) => [`Its change feed is first exported to ${file}; if that fails, nothing is dropped.`]
    })
  ].join("\n")

/**
 * `admin workspace drop <slug>`: a customer leaving. Confirmed first (the
 * slug typed on a terminal, or `--yes`); with `--export`, the workspace's
 * whole change feed is written to a file next (`writeFeedFile`, as `feed
 * export` writes it), and a failed export drops nothing; then
 * `Workspaces.drop` (docs/decisions.md, "Dropping a workspace").
 */
export const workspaceDrop = ({
  exportTo,
  slug,
  yes
}: {
  readonly slug: string
  readonly exportTo: Option.Option<string>
  readonly yes: boolean
}) =>
  Effect.gen(function* () {
    const workspaces = yield* Workspaces
    const workspace = yield* workspaces.get(slug)
    yield* confirm({ question: dropQuestion(workspace, exportTo), expected: workspace.slug }, yes)
    if (Option.isSome(exportTo)) {
      const total = yield* (yield* Feed).countAfter(workspace, feedStart)
      const written = yield* writeFeedFile({
        workspace,
        out: exportTo.value,
        start: feedStart,
        filter: { readable: "all" },
        total
      })
      yield* Console.error(exportedLine(written))
    }
    yield* workspaces.drop(workspace)
    yield* Console.log(
      `workspace ${workspace.slug} dropped (schema ${workspace.schema}; its queued work discarded, its sessions and streams ended)`
    )
  })

export const userList = Effect.gen(function* () {
  const users = yield* (yield* Users).list
  yield* printTable(
    "no users (create one: user create --email ... --name ..., then type or pipe the password)",
    ["EMAIL", "NAME", "WORKSPACES", "ID"],
    users.map((user) => [user.email, user.name, listOf(user.workspaces), user.id])
  )
})

export const userCreate = ({ email, name }: { readonly email: string; readonly name: string }) =>
  Effect.gen(function* () {
    const password = yield* requiredSecret("password")
    const user = yield* (yield* Users).create({ email, name, password: Redacted.value(password) })
    yield* Console.log(`user ${user.email} created (id ${user.id})`)
  })

export const userSignOut = ({ email }: { readonly email: string }) =>
  Effect.gen(function* () {
    const user = yield* (yield* Users).getByEmail(email)
    const ended = yield* (yield* SignOuts).everywhere(user.id)
    yield* Console.log(
      `${user.email} is signed out everywhere (${ended} session${ended === 1 ? "" : "s"} ended; open streams closed)`
    )
  })

export const memberList = ({ workspace }: { readonly workspace: string }) =>
  Effect.gen(function* () {
    const target = yield* (yield* Workspaces).get(workspace)
    const { members } = yield* (yield* Members).list(target)
    yield* printTable(
      `no members in ${target.slug}`,
      ["EMAIL", "NAME", "ROLES", "USER ID"],
      members.map((member) => [member.email, member.name, listOf(member.roles), member.userId])
    )
  })

interface MemberInput {
  readonly workspace: string
  readonly email: string
}

export const memberAdd = ({ email, role, workspace }: MemberInput & { readonly role: string }) =>
  Effect.gen(function* () {
    const target = yield* (yield* Workspaces).get(workspace)
    const user = yield* (yield* Users).getByEmail(email)
    yield* (yield* Members).add(target, user.id, role)
    yield* Console.log(`${user.email} is a member of ${target.slug} with role ${role}`)
  })

export const memberRemove = ({ email, workspace }: MemberInput) =>
  Effect.gen(function* () {
    const target = yield* (yield* Workspaces).get(workspace)
    const user = yield* (yield* Users).getByEmail(email)
    yield* (yield* Members).remove(target, user.id)
    yield* Console.log(`${user.email} is no longer a member of ${target.slug} (roles and sessions there ended)`)
  })

export const memberSetRole = ({ email, role, workspace }: MemberInput & { readonly role: string }) =>
  Effect.gen(function* () {
    const target = yield* (yield* Workspaces).get(workspace)
    const user = yield* (yield* Users).getByEmail(email)
    yield* (yield* Members).setRole(target, user.id, role)
    yield* Console.log(`${user.email} holds role ${role} in ${target.slug} (and no other)`)
  })

export const roleGrant = (input: {
  readonly workspace: string
  readonly role: string
  readonly businessObject: string
  readonly permission: "read" | "update"
}) =>
  Effect.gen(function* () {
    const target = yield* (yield* Workspaces).get(input.workspace)
    yield* (yield* Roles).grant(target, input.role, input.businessObject, input.permission)
    yield* (yield* Members).roleChanged(target, input.role)
    yield* Console.log(`role ${input.role} in ${target.slug} may ${input.permission} ${input.businessObject}`)
  })

interface HolderInput {
  readonly workspace: string
  readonly name: string
  readonly role: string
}

export const apiKeyCreate = ({ name, role, workspace }: HolderInput) =>
  Effect.gen(function* () {
    const target = yield* (yield* Workspaces).get(workspace)
    const { apiKey, key } = yield* (yield* ApiKeys).create(target, name, role)
    yield* Console.log(`API key ${apiKey.id} (${apiKey.name}) created with role ${role}. It is shown only this once:`)
    yield* Console.log(key)
  })

export const apiKeyList = ({ workspace }: { readonly workspace: string }) =>
  Effect.gen(function* () {
    const target = yield* (yield* Workspaces).get(workspace)
    const keys = yield* (yield* ApiKeys).list(target)
    yield* printTable(
      `no API keys in ${target.slug}`,
      ["ID", "NAME", "HOLDER", "ROLES", "CREATED", "STATE"],
      keys.map((key) => [
        key.id,
        key.name,
        key.agent === null ? "service account" : `agent ${key.agent}`,
        key.agent === null ? listOf(key.roles) : "(the agent's)",
        minute(key.createdAt),
        key.revokedAt === null ? "active" : `revoked ${minute(key.revokedAt)}`
      ])
    )
  })

export const apiKeyRevoke = ({ id, workspace }: { readonly workspace: string; readonly id: string }) =>
  Effect.gen(function* () {
    const target = yield* (yield* Workspaces).get(workspace)
    yield* (yield* ApiKeys).revoke(target, id)
    yield* Console.log(`API key ${id} revoked`)
  })

export const agentCreate = ({ name, role, workspace }: HolderInput) =>
  Effect.gen(function* () {
    const target = yield* (yield* Workspaces).get(workspace)
    const { agent, key } = yield* (yield* Agents).create(target, name, role)
    yield* Console.log(`agent ${agent.id} (${agent.name}) created with role ${role}. Its key is shown only this once:`)
    yield* Console.log(key)
  })

export const agentList = ({ workspace }: { readonly workspace: string }) =>
  Effect.gen(function* () {
    const target = yield* (yield* Workspaces).get(workspace)
    const agents = yield* (yield* Agents).list(target)
    yield* printTable(
      `no agents in ${target.slug}`,
      ["NAME", "ROLES", "ACTIVE KEYS", "ID"],
      agents.map((agent) => [agent.name, listOf(agent.roles), String(agent.activeKeys), agent.id])
    )
  })

export const failedList = Effect.gen(function* () {
  const failed = yield* (yield* FailedWork).list
  if (failed.length === 0) return yield* Console.log("no failed jobs or workflow runs")
  for (const item of failed) {
    yield* Console.log(
      `${item.id} ${item.kind} ${item.name} in ${item.workspace}: ${item.attempts} attempts, last at ${item.failedAt.toISOString()}: ${item.lastFailure.split("\n")[0]}`
    )
  }
})

export const failedRetry = ({ id }: { readonly id: string }) =>
  Effect.gen(function* () {
    if (!(yield* (yield* FailedWork).retry(id)))
      return yield* new NotFound({ message: `no failed job or workflow run ${id}` })
    yield* Console.log(`${id} will be tried again`)
  })
