import { Context } from "effect"

/**
 * Where a command was typed: its working directory (a relative file name is
 * resolved against it) and whether a progress bar may be drawn on standard
 * error. A command run by the embedded server for the command line gets the
 * command line's directory and no bar (its output comes back in one answer).
 */
export const AdminInvocation = Context.Reference<{ readonly cwd: string; readonly progress: boolean }>(
  "AdminInvocation",
  {
    defaultValue: () => ({
      cwd: process.cwd(),
      progress: process.stderr.isTTY === true
    })
  }
)
