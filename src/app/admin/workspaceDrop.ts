import { Argument, Command, Flag } from "effect/cli"
import { Console, Effect, Option } from "effect"
import type { Workspace } from "../../api/Workspace"
import { Feed } from "../../audit/Feed"
import { feedStart } from "../../audit/FeedCursor"
import { Workspaces } from "../../tenancy/Workspaces"
import { confirm } from "./confirmation"
import { exportedLine, writeFeedFile } from "./feedFile"
import { command } from "./presenter"

const question = (workspace: Workspace, exportTo: Option.Option<string>) =>
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
 * whole change feed is written to a file next, and a failed export drops
 * nothing; then `Workspaces.drop` (docs/decisions.md, "Dropping a workspace").
 */
export const workspaceDrop = command(
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
  ({ exportTo, slug, yes }) =>
    Effect.gen(function* () {
      const workspaces = yield* Workspaces
      const workspace = yield* workspaces.get(slug)
      yield* confirm({ question: question(workspace, exportTo), expected: workspace.slug }, yes)
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
).pipe(
  Command.withDescription(
    "Drop a workspace for good, after confirming (type its slug, or --yes); --export writes its change feed to a file first"
  )
)
