import { Console, Effect, Option, Schema, SchemaIssue } from "effect"
import { BadRequest } from "../../api/errors"
import { FeedParams } from "../../api/Feed"
import { Feed } from "../../audit/Feed"
import { decodeFeedCursor, encodeFeedCursor, feedStart } from "../../audit/FeedCursor"
import { Workspaces } from "../../tenancy/Workspaces"
import { exportedLine, writeFeedFile } from "./feedFile"

const decodeParams = Schema.decodeUnknownEffect(FeedParams)
const issuesOf = SchemaIssue.makeFormatterStandardSchemaV1()

/** `admin feed export`'s flags and file (commands.ts): a filter's flags are none when not given. */
export interface FeedExportOptions {
  readonly workspace: string
  readonly out: string
  readonly cursor: Option.Option<string>
  readonly businessObject: Option.Option<string>
  readonly record: Option.Option<string>
  readonly actor: Option.Option<string>
  readonly correlationId: Option.Option<string>
  readonly from: Option.Option<string>
  readonly to: Option.Option<string>
}

/**
 * `admin feed export`: the workspace feed (every business object: the admin
 * reads all), or the part the filters keep, as NDJSON into a file
 * (`writeFeedFile`): each line the HTTP export's with the row's ledger fields
 * (LedgerFeedEntry), so an auditor can recompute the chain from the file
 * alone (scripts/verify-ledger-export.mjs). The last line names the cursor
 * to go on from.
 */
export const feedExport = (options: FeedExportOptions) =>
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
