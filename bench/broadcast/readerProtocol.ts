/** What load.ts and its reader threads (reader.ts) post to each other (structured clone, one codebase). */

export type Target = "server" | "bare"

export type ReaderCommand =
  /** Opens one stream per entry of `workspaces` (indexes into the plan's workspaces). */
  | { readonly _tag: "Open"; readonly id: number; readonly target: Target; readonly workspaces: ReadonlyArray<number> }
  | { readonly _tag: "CloseAll"; readonly id: number; readonly target: Target }
  /** Starts counting receipts against the commits that follow. */
  | { readonly _tag: "Track"; readonly target: Target; readonly windowStart: number; readonly windowEnd: number }
  /** Saves that committed: record id, commit time, whether the save started inside the window. */
  | { readonly _tag: "Commits"; readonly commits: ReadonlyArray<readonly [string, number, boolean]> }
  | { readonly _tag: "Status"; readonly id: number }
  /** Stops counting and hands over what was counted. */
  | { readonly _tag: "Collect"; readonly id: number }

export type ReaderReply =
  | {
      readonly _tag: "Opened"
      readonly id: number
      readonly opened: number
      readonly failed: number
      readonly firstError: string | undefined
      /** This reader's open streams per workspace, after opening. */
      readonly perWorkspace: ReadonlyArray<number>
    }
  | { readonly _tag: "Closed"; readonly id: number }
  | { readonly _tag: "Dropped"; readonly target: Target; readonly workspace: number }
  | { readonly _tag: "Status"; readonly id: number; readonly receivedAll: number; readonly lastReceiptAt: number }
  | {
      readonly _tag: "Collected"
      readonly id: number
      /** Commit -> receipt of every hint of a measured save, ms. */
      readonly latencies: Float64Array
      /** Hints received per record id. */
      readonly received: ReadonlyArray<readonly [string, number]>
      readonly arrivalsInWindow: number
      readonly early: number
      readonly stray: number
      readonly dropped: number
    }
  | { readonly _tag: "Failed"; readonly id: number; readonly message: string }
