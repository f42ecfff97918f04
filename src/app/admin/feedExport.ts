import { Argument, Command, Flag } from "effect/cli"
import { FileSystem } from "effect"
import { Console, Effect, Option, Schema, SchemaIssue } from "effect"
import { BadRequest } from "../../api/errors"
import { FeedParams } from "../../api/Feed"
import { Feed, feedLine } from "../../audit/Feed"
import { decodeFeedCursor, encodeFeedCursor, feedStart } from "../../audit/FeedCursor"
import { Workspaces } from "../../tenancy/Workspaces"
import { resolve } from "node:path"
import { AdminInvocation } from "./AdminInvocation"
import { command } from "./presenter"
import { progressLine } from "./progressBar"

/** Rows per query: what the export holds in memory at a time. */
const batchRows = 2_000
/** The bar is redrawn at most this often. */
const redrawMs = 200

const text = (name: string, description: string) =>
  Flag.String(name).pipe(Flag.optional, Flag.withDescription(description))

const decodeParams = Schema.decodeUnknownEffect(FeedParams)
const issuesOf = SchemaIssue.makeFormatterStandardSchemaV1()

/**
 * `admin feed export`: the workspace feed (every business object: the admin
 * reads all) as NDJSON into a file, in keyset batches written one after the
 * other (memory: one batch). Each line is the HTTP export's with the row's
 * ledger fields (LedgerFeedEntry), so an auditor can recompute the chain from
 * the file alone (scripts/verify-ledger-export.mjs). A progress bar on
 * standard error; the last line names the cursor to go on from.
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
      const feed = yield* Feed
      const fs = yield* FileSystem.FileSystem
      const filter = { ...params, readable: "all" as const }
      const filtered = Object.keys(given).some((name) => name !== "workspace" && name !== "out" && name !== "cursor")
      // Unfiltered, the total is one index-only count; filtered, it would cost as much as the export.
      const total = filtered ? undefined : yield* feed.countAfter(workspace, start)
      const invocation = yield* AdminInvocation
      const tty = invocation.progress
      const out = resolve(invocation.cwd, options.out)
      const started = Date.now()
      let drawn = 0
      const draw = (rows: number, last: boolean) =>
        Effect.sync(() => {
          if (!tty || (!last && Date.now() - drawn < redrawMs)) return
          drawn = Date.now()
          process.stderr.write(`\r${progressLine(rows, total, Date.now() - started)}${last ? "\n" : ""}`)
        })

      const encoder = new TextEncoder()
      let rows = 0
      let at = start
      yield* Effect.scoped(
        Effect.gen(function* () {
          const file = yield* fs.open(out, { flag: "w" })
          for (;;) {
            const batch = yield* feed.batch(workspace, at, filter, batchRows, "ledger")
            if (batch.rows.length > 0) yield* file.write(encoder.encode(batch.rows.map(feedLine).join("")))
            rows += batch.rows.length
            at = batch.next
            yield* draw(rows, !batch.more)
            if (!batch.more) return
          }
        })
      )
      yield* Console.error(
        `exported ${rows.toLocaleString("en-US")} rows to ${out} in ${((Date.now() - started) / 1000).toFixed(1)} s; ` +
          `go on with --cursor ${encodeFeedCursor(at)}`
      )
    })
).pipe(
  Command.withDescription(
    "Write a workspace's change feed (or a filtered part) to a file as NDJSON, with each row's ledger fields"
  )
)
