import { Effect } from "effect"
import type * as Handlers from "./handlers"

/**
 * Runs a command's body from handlers.ts, loaded (with the services it uses)
 * on the first command that runs: `--help` and `--version` load neither.
 */
export const run = <E, R>(handler: (handlers: typeof Handlers) => Effect.Effect<void, E, R>) =>
  Effect.flatMap(
    Effect.promise(() => import("./handlers")),
    handler
  )
