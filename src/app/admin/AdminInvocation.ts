import { Context } from "effect"

/**
 * Where a destructive command gets its go-ahead (see `confirmation.ts`):
 * - `Terminal`: it asks on this process's terminal;
 * - `None`: there is no terminal to ask on: only `--yes` will do;
 * - `CommandLine`: it runs in the embedded server for a command line, which
 *   asks on its own terminal and sends what was typed (`confirmed`) with the
 *   command again.
 */
export type Confirmation =
  | { readonly _tag: "Terminal" }
  | { readonly _tag: "None" }
  | { readonly _tag: "CommandLine"; readonly confirmed: string | undefined }

/** A terminal on both ends: the question goes to standard error, the answer comes from standard input. */
export const localConfirmation = (): Confirmation =>
  process.stdin.isTTY === true && process.stderr.isTTY === true ? { _tag: "Terminal" } : { _tag: "None" }

/**
 * Where a command was typed: its working directory (a relative file name is
 * resolved against it), whether a progress bar may be drawn on standard
 * error, and how a destructive command is confirmed. A command run by the
 * embedded server for the command line gets the command line's directory, no
 * bar (its output comes back in one answer) and the command line's confirmation.
 */
export const AdminInvocation = Context.Reference<{
  readonly cwd: string
  readonly progress: boolean
  readonly confirmation: Confirmation
}>("AdminInvocation", {
  defaultValue: () => ({
    cwd: process.cwd(),
    progress: process.stderr.isTTY === true,
    confirmation: localConfirmation()
  })
})
