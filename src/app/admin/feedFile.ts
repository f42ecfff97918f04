import { Effect, FileSystem } from "effect"
import { resolve } from "node:path"
import type { Workspace } from "../../api/Workspace"
import { Feed, feedLine } from "../../audit/Feed"
import type { FeedFilter } from "../../audit/Feed"
import type { FeedPosition } from "../../audit/FeedCursor"
import { AdminInvocation } from "./AdminInvocation"
import { progressLine } from "./progressBar"

/** Rows per query: what the export holds in memory at a time. */
const batchRows = 2_000
/** The bar is redrawn at most this often. */
const redrawMs = 200

export interface FeedFileRequest {
  readonly workspace: Workspace
  /** Where the NDJSON goes (overwritten), relative to where the command was typed. */
  readonly out: string
  readonly start: FeedPosition
  readonly filter: FeedFilter
  /** The rows to come, for the progress bar; unknown for a filtered export. */
  readonly total: number | undefined
}

/**
 * Writes the workspace's feed after `start` that `filter` keeps to a file as
 * NDJSON, the HTTP export's lines with each row's ledger fields added
 * (docs/feed.md: what an auditor needs), in keyset batches written one
 * after the other (memory: one batch), with a progress bar on standard error
 * when it is a terminal. Returns how many rows went to which file, and the
 * cursor to go on from.
 */
export const writeFeedFile = (request: FeedFileRequest) =>
  Effect.gen(function* () {
    const feed = yield* Feed
    const fs = yield* FileSystem.FileSystem
    const invocation = yield* AdminInvocation
    const tty = invocation.progress
    const out = resolve(invocation.cwd, request.out)
    const started = Date.now()
    let drawn = 0
    const draw = (rows: number, last: boolean) =>
      Effect.sync(() => {
        if (!tty || (!last && Date.now() - drawn < redrawMs)) return
        drawn = Date.now()
        process.stderr.write(`\r${progressLine(rows, request.total, Date.now() - started)}${last ? "\n" : ""}`)
      })

    const encoder = new TextEncoder()
    let rows = 0
    let at = request.start
    yield* Effect.scoped(
      Effect.gen(function* () {
        const file = yield* fs.open(out, { flag: "w" })
        for (;;) {
          const batch = yield* feed.batch(request.workspace, at, request.filter, batchRows, "ledger")
          if (batch.rows.length > 0) yield* file.write(encoder.encode(batch.rows.map(feedLine).join("")))
          rows += batch.rows.length
          at = batch.next
          yield* draw(rows, !batch.more)
          if (!batch.more) return
        }
      })
    )
    return { rows, out, at, seconds: (Date.now() - started) / 1000 }
  })

/** What an export wrote, in one line for standard error. */
export const exportedLine = (written: { readonly rows: number; readonly out: string; readonly seconds: number }) =>
  `exported ${written.rows.toLocaleString("en-US")} rows to ${written.out} in ${written.seconds.toFixed(1)} s`
