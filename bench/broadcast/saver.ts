/**
 * The load generator's saves. Each save creates a `crm/company` record
 * (UnitOfWork + Records.create, the workspace's admin user as actor), so a
 * hint's record id names exactly one save. Every start, commit and failure is
 * reported through `post`; times are `now()`, the clock the receipts use.
 */
import { Effect } from "effect"
import { withActor } from "../../src/context/Frames"
import { Records } from "../../src/records/Records"
import { Workspace } from "../../src/api/Workspace"
import { UnitOfWork } from "../../src/unitOfWork/UnitOfWork"
import type { Plan } from "./protocol"
import { makeRuntime } from "./setup"
import { now } from "./stats"

const maxInFlight = 256

/** One phase's saves: save i is due at `start + i / rate` (`start` a `now()`), round-robin over `workspaces`. */
export interface SaverRun {
  readonly phase: string
  readonly rate: number
  readonly workspaces: ReadonlyArray<number>
  readonly start: number
  readonly durationMs: number
}

export type SaverEvent =
  | { readonly _tag: "Started"; readonly index: number; readonly workspace: number; readonly startedAt: number }
  /** Not started: the cap of saves in flight was reached. */
  | { readonly _tag: "Throttled"; readonly startedAt: number }
  | { readonly _tag: "Committed"; readonly index: number; readonly id: string; readonly committedAt: number }
  | { readonly _tag: "Failed"; readonly index: number; readonly message: string }
  /** Every save of the run has been started (or throttled) and has finished. */
  | { readonly _tag: "Finished" }

export interface Saver {
  readonly run: (run: SaverRun) => void
  readonly dispose: () => Promise<void>
}

/** Builds the services (pool, Redis clients) the saves run on. */
export const makeSaver = async (plan: Plan, post: (event: SaverEvent) => void): Promise<Saver> => {
  const workspaces = plan.workspaces.map((w) => new Workspace({ id: w.id, slug: w.slug, name: w.name }))
  const runtime = makeRuntime(plan.databaseUrl, plan.redisUrl, 10)
  const { records, units } = await runtime.runPromise(Effect.all({ records: Records, units: UnitOfWork }))

  const save = (workspace: number, name: string) => {
    const target = workspaces[workspace]
    const owner = plan.workspaces[workspace]
    if (target === undefined || owner === undefined) return Effect.die(new Error(`no workspace ${workspace}`))
    return (
      units
        .run(target, records.create(plan.businessObject, { name, wonDeals: 0 }))
        // Spans would only be dropped here: the load generator exports no traces.
        .pipe(withActor({ kind: "user", ...owner.user }), Effect.withTracerEnabled(false))
    )
  }

  const run = (command: SaverRun) => {
    const total = Math.floor((command.durationMs * command.rate) / 1000)
    const count = command.workspaces.length
    let issued = 0
    let inFlight = 0
    let finished = false
    const finishIfDone = () => {
      if (!finished && issued >= total && inFlight === 0) {
        finished = true
        post({ _tag: "Finished" })
      }
    }
    const launch = (index: number) => {
      const workspace = command.workspaces[index % count] ?? 0
      const startedAt = now()
      if (inFlight >= maxInFlight) return post({ _tag: "Throttled", startedAt })
      inFlight++
      post({ _tag: "Started", index, workspace, startedAt })
      runtime
        .runPromise(save(workspace, `${command.phase} save ${index}`))
        .then(
          // Taken as soon as the unit returns: COMMIT acknowledged, the publish just handed off.
          (record) => post({ _tag: "Committed", index, id: record.id, committedAt: now() }),
          (error: unknown) => post({ _tag: "Failed", index, message: String(error) })
        )
        .finally(() => {
          inFlight--
          finishIfDone()
        })
    }
    // A fixed-rate scheduler on a 1 ms tick.
    const ticker = setInterval(() => {
      const due = Math.min(total, Math.floor(((now() - command.start) * command.rate) / 1000))
      while (issued < due) launch(issued++)
      if (issued >= total) {
        clearInterval(ticker)
        finishIfDone()
      }
    }, 1)
  }

  return { run, dispose: () => runtime.dispose() }
}
