import { Argument, Command, Flag } from "effect/cli"
import { Console, Effect, Option, Schema, SchemaIssue } from "effect"
import { BadRequest } from "../../api/errors"
import { FeedParams } from "../../api/Feed"
import { Feed } from "../../audit/Feed"
import { decodeFeedCursor, encodeFeedCursor, feedStart } from "../../audit/FeedCursor"
import { Workspaces } from "../../tenancy/Workspaces"
import { exportedLine, writeFeedFile } from "./feedFile"
import { command } from "./presenter"

const text = (name: string, description: string) =>
  Flag.String(name).pipe(Flag.optional, Flag.withDescription(description))

const decodeParams = Schema.decodeUnknownEffect(FeedParams)
const issuesOf = SchemaIssue.makeFormatterStandardSchemaV1()

/**
 * `admin feed export`: the workspace feed (every business object: the admin
 * reads all), or the part the filters keep, as NDJSON into a file
 * (`writeFeedFile`); the last line names the cursor to go on from.
 */
export const feedExport = command(
  "export",
  {
    workspace: Flag.String("workspace").pipe(Flag.withDescription("workspace slug")),
    out: Argument.String("file").pipe(Argument.withDescription("where the NDJSON goes (overwritten)")),
    cursor: text("cursor", "go on after this cursor (a line's `cursor`, or the one the last export printed)"),
    businessObject: text("business-object", "only rows of this business object (<namespace>/<name>)"),
    record: text("record", "only rows of this record id"),
    actor: text("actor", "only rows of this actor (an id, or a system actor's name)"),
    correlationId: text("correlation-id", "only rows of this unit of work"),
    from: text("from", "only rows at or after this instant (ISO-8601)"),
    to: text("to", "only rows before this instant (ISO-8601)")
  },
  (options) =>
    Effect.gen(function* () {
      const given = Object.fromEntries(
        Object.entries(options).flatMap(([name, value]) =>
          Option.isOption(value) && Option.isSome(value) ? [[name, value.value]] : []
        )
      )
      const params = yield* decodeParams(given).pipe(
        Effect.mapError((error) => new BadRequest({ message: issuesOf(error.issue).issues[0]?.message ?? "" }))
      )
      const start =
        params.cursor === undefined
          ? feedStart
          : yield* Option.match(decodeFeedCursor(params.cursor), {
              onNone: () => new BadRequest({ message: "--cursor: not a cursor of the feed" }),
              onSome: Effect.succeed
            })
      const workspace = yield* (yield* Workspaces).get(options.workspace)
      const filtered = Object.keys(given).some((name) => name !== "workspace" && name !== "out" && name !== "cursor")
      // Unfiltered, the total is one index-only count; filtered, it would cost as much as the export.
      const total = filtered ? undefined : yield* (yield* Feed).countAfter(workspace, start)
      const written = yield* writeFeedFile({
        workspace,
        out: options.out,
        start,
        filter: { ...params, readable: "all" },
        total
      })
      yield* Console.error(`${exportedLine(written)}; go on with --cursor ${encodeFeedCursor(written.at)}`)
    })
).pipe(Command.withDescription("Write a workspace's change feed (or a filtered part) to a file as NDJSON"))
