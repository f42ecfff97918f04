import { Argument, CliOutput, Command, Flag } from "effect/cli"
import { Effect } from "effect"
import packageJson from "../../../package.json" with { type: "json" }
import { auditGroup } from "./audit"
import { AsksSecret, formerPasswordFlag } from "./CommandSecret"
import { run } from "./runHandler"
import { command, presenterFor } from "./presenter"

/**
 * The admin command tree: each command's name, parameters and description.
 * What a command does is in handlers.ts, loaded with the services it uses
 * when a command runs (`run`): `--help` and `--version` load neither.
 */

const workspaceOption = Flag.String("workspace").pipe(Flag.withDescription("workspace slug"))
const roleOption = Flag.String("role").pipe(Flag.withDescription("role name"))
const emailOption = Flag.String("email").pipe(Flag.withDescription("the user's email address"))
const nameOption = (description: string) => Flag.String("name").pipe(Flag.withDescription(description))

const workspaceCreate = command(
  "create",
  {
    slug: Argument.String("slug").pipe(Argument.withDescription("lower-case letters, digits and hyphens")),
    name: Flag.String("name").pipe(Flag.optional, Flag.withDescription("display name (default: the slug)"))
  },
  (input) => run((handlers) => handlers.workspaceCreate(input))
).pipe(
  Command.withDescription(
    "Create a workspace: its schema, migrated, the built-in admin role and the plugins' seed data"
  )
)

const workspaceSeed = command("seed", { slug: Argument.String("slug") }, (input) =>
  run((handlers) => handlers.workspaceSeed(input))
).pipe(Command.withDescription("Write the plugins' seed data that a workspace does not have yet (safe to repeat)"))

const workspaceList = command("list", {}, () => run((handlers) => handlers.workspaceList)).pipe(
  Command.withDescription("List the workspaces")
)

const workspaceDrop = command(
  "drop",
  {
    slug: Argument.String("slug"),
    exportTo: Flag.String("export").pipe(
      Flag.optional,
      Flag.withDescription("first write the workspace's whole change feed to this file as NDJSON (overwritten)")
    ),
    yes: Flag.Boolean("yes").pipe(
      Flag.withDefault(false),
      Flag.withDescription("go ahead without asking (no terminal needed)")
    )
  },
  (input) => run((handlers) => handlers.workspaceDrop(input))
).pipe(
  Command.withDescription(
    "Drop a workspace for good, after confirming (type its slug, or --yes); --export writes its change feed to a file first"
  )
)

const userList = command("list", {}, () => run((handlers) => handlers.userList)).pipe(
  Command.withDescription("List the users and the workspaces each belongs to")
)

const userCreate = command(
  "create",
  { email: emailOption, name: nameOption("the user's name, as others see it"), formerPassword: formerPasswordFlag },
  ({ email, name }) => run((handlers) => handlers.userCreate({ email, name }))
).pipe(
  Command.withDescription(
    "Create a user who can sign in; the password is typed when asked (not shown), or piped as the first line of standard input"
  ),
  Command.annotate(AsksSecret, "password")
)

const userSignOut = command("sign-out", { email: emailOption }, (input) =>
  run((handlers) => handlers.userSignOut(input))
).pipe(Command.withDescription("Sign a user out of every session, in every workspace; their open streams end"))

const memberList = command("list", { workspace: workspaceOption }, (input) =>
  run((handlers) => handlers.memberList(input))
).pipe(Command.withDescription("List a workspace's members and the roles each holds"))

const memberAdd = command("add", { workspace: workspaceOption, email: emailOption, role: roleOption }, (input) =>
  run((handlers) => handlers.memberAdd(input))
).pipe(Command.withDescription("Make a user a member of a workspace, holding a role"))

const memberRemove = command("remove", { workspace: workspaceOption, email: emailOption }, (input) =>
  run((handlers) => handlers.memberRemove(input))
).pipe(
  Command.withDescription(
    "Remove a member from a workspace: their roles and sessions there end, and their open streams close (not the last admin)"
  )
)

const memberSetRole = command(
  "set-role",
  { workspace: workspaceOption, email: emailOption, role: roleOption },
  (input) => run((handlers) => handlers.memberSetRole(input))
).pipe(
  Command.withDescription(
    "Make a member hold exactly one role (their open streams close and reopen with it; the last admin stays admin)"
  )
)

const roleGrant = command(
  "grant",
  {
    workspace: workspaceOption,
    role: roleOption,
    businessObject: Flag.String("business-object").pipe(Flag.withDescription("<namespace>/<name>, or * for all")),
    permission: Flag.Literals("permission", ["read", "update"])
  },
  (input) => run((handlers) => handlers.roleGrant(input))
).pipe(Command.withDescription("Grant a role a permission on a business object (creates the role if new)"))

const apiKeyCreate = command(
  "create",
  { workspace: workspaceOption, name: nameOption("what to call it"), role: roleOption },
  (input) => run((handlers) => handlers.apiKeyCreate(input))
).pipe(Command.withDescription("Create an API key (a service account) holding a role; prints the key once"))

const apiKeyList = command("list", { workspace: workspaceOption }, (input) =>
  run((handlers) => handlers.apiKeyList(input))
).pipe(Command.withDescription("List a workspace's API keys, revoked ones too (never their secrets)"))

const apiKeyRevoke = command(
  "revoke",
  { workspace: workspaceOption, id: Flag.String("id").pipe(Flag.withDescription("the key's id")) },
  (input) => run((handlers) => handlers.apiKeyRevoke(input))
).pipe(Command.withDescription("Revoke an API key"))

const agentCreate = command(
  "create",
  { workspace: workspaceOption, name: nameOption("what to call it"), role: roleOption },
  (input) => run((handlers) => handlers.agentCreate(input))
).pipe(Command.withDescription("Create an agent (a principal with its own roles) and the key it signs in with"))

const agentList = command("list", { workspace: workspaceOption }, (input) =>
  run((handlers) => handlers.agentList(input))
).pipe(Command.withDescription("List a workspace's agents, their roles and live keys"))

const failedList = command("failed", {}, () => run((handlers) => handlers.failedList)).pipe(
  Command.withDescription("List jobs and workflow runs that used up their attempts")
)

const failedRetry = command("retry", { id: Argument.String("id") }, (input) =>
  run((handlers) => handlers.failedRetry(input))
).pipe(Command.withDescription("Give a failed job or workflow run a fresh set of attempts"))

const text = (name: string, description: string) =>
  Flag.String(name).pipe(Flag.optional, Flag.withDescription(description))

const feedExport = command(
  "export",
  {
    workspace: workspaceOption,
    out: Argument.String("file").pipe(Argument.withDescription("where the NDJSON goes (overwritten)")),
    cursor: text("cursor", "go on after this cursor (a line's `cursor`, or the one the last export printed)"),
    businessObject: text("business-object", "only rows of this business object (<namespace>/<name>)"),
    record: text("record", "only rows of this record id"),
    actor: text("actor", "only rows of this actor (an id, or a system actor's name)"),
    correlationId: text("correlation-id", "only rows of this unit of work"),
    from: text("from", "only rows at or after this instant (ISO-8601)"),
    to: text("to", "only rows before this instant (ISO-8601)")
  },
  (options) => run((handlers) => handlers.feedExport(options))
).pipe(
  Command.withDescription(
    "Write a workspace's change feed (or a filtered part) to a file as NDJSON, with each row's ledger fields"
  )
)

const recordsImport = command(
  "import",
  {
    workspace: workspaceOption,
    businessObject: Flag.String("business-object").pipe(Flag.withDescription("<namespace>/<name>, e.g. crm/deal")),
    file: Argument.String("file").pipe(
      Argument.withDescription(
        'NDJSON: per line a record\'s values (a create) or {"id", "values", "ifMatch"?} (an update)'
      )
    )
  },
  (input) => run((handlers) => handlers.recordsImport(input))
).pipe(
  Command.withDescription(
    "Import records from an NDJSON file in batches of 1,000 lines, each all or none, as the operator. " +
      "Interrupted or refused, run the same command again: the batches already imported are recognised " +
      "(each one's Idempotency-Key stands for the file up to its last line, kept IDEMPOTENCY_KEY_TTL) and skipped"
  )
)

const group = (name: string, description: string) => Command.make(name).pipe(Command.withDescription(description))

export const adminCommand = Command.make("admin").pipe(
  Command.withDescription(
    "Set up workspaces, users, roles, API keys and agents; look after failed jobs; export the change feed"
  ),
  Command.withSubcommands([
    group("workspace", "Workspaces").pipe(
      Command.withSubcommands([workspaceList, workspaceCreate, workspaceSeed, workspaceDrop])
    ),
    group("user", "Users").pipe(Command.withSubcommands([userList, userCreate, userSignOut])),
    group("member", "Workspace members").pipe(
      Command.withSubcommands([memberList, memberAdd, memberRemove, memberSetRole])
    ),
    group("role", "Roles and their grants").pipe(Command.withSubcommands([roleGrant])),
    group("apikey", "API keys").pipe(Command.withSubcommands([apiKeyList, apiKeyCreate, apiKeyRevoke])),
    group("agent", "Agents").pipe(Command.withSubcommands([agentList, agentCreate])),
    group("jobs", "Background jobs and workflow runs").pipe(Command.withSubcommands([failedList, failedRetry])),
    group("records", "Business object records").pipe(Command.withSubcommands([recordsImport])),
    group("feed", "The workspace change feed").pipe(Command.withSubcommands([feedExport])),
    auditGroup
  ])
)

/** Help, version and bad invocations as the command line has always shown them. */
export const adminPresenter = presenterFor(adminCommand)

/** The command line's version (`admin --version`: the package's). */
export const cliOptions = { version: packageJson.version }

/** Runs the admin command line on `argv` (as `process.argv`: node, script, then the arguments). */
export const runAdmin = (argv: ReadonlyArray<string>) =>
  Command.runWith(
    adminCommand,
    cliOptions
  )(argv.slice(2)).pipe(Effect.provideService(CliOutput.Presenter, adminPresenter))
