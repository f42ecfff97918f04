/**
 * The load generator's saves. Each save commits a new `crm/company` record
 * (the service's own `RecordStore.insert`: one INSERT, committed on its own)
 * and then publishes its `changed` hint through the service's own
 * `BroadcastBus` (the same envelope and Redis channel the outbound bridge
 * uses after a unit of work commits), so a hint's record id names exactly one
 * save. The unit of work around it (validation, audit row, events) is left
 * out on purpose: it costs about 2 ms of CPU per save in this process, and
 * 500 of them a second would take a core of the machine away from the
 * broadcast path this bench measures (the write path has bench:audit and
 * bench:http). Every start, commit and failure is reported through `post`;
 * times are `now()`, the clock the receipts use.
 */
import { Effect } from "effect"
import { BroadcastBus } from "../../src/broadcast/BroadcastBus"
import { RecordStore } from "../../src/records/RecordStore"
import { Workspace } from "../../src/api/Workspace"
import { BroadcastEnvelope } from "../../src/broadcast/Broadcast"
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
  const runtime = makeRuntime(plan.databaseUrl, plan.redis, 10)
  const { store, bus } = await runtime.runPromise(
    Effect.gen(function* () {
      return { store: yield* RecordStore, bus: yield* BroadcastBus }
    }).pipe(Effect.provide(RecordStore.layer))
  )

  /** `committed` is called once the INSERT has committed, before the publish (as the bridge publishes after COMMIT). */
  const save = (workspace: number, name: string, committed: (id: string) => void) => {
    const target = workspaces[workspace]
    if (target === undefined) return Effect.die(new Error(`no workspace ${workspace}`))
    return store.insert(target, plan.businessObject, "operational", { name, wonDeals: 0 }).pipe(
      Effect.tap((record) => Effect.sync(() => committed(record.id))),
      Effect.tap((record) =>
        bus.publish(
          new BroadcastEnvelope({
            workspace: target.id,
            type: "changed",
            data: { businessObject: plan.businessObject, businessObjectId: record.id }
          })
        )
      ),
      // Spans would only be dropped here: the load generator exports no traces.
      Effect.withTracerEnabled(false)
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
      let committed = false
      runtime
        .runPromise(
          // Taken as soon as the INSERT's commit is acknowledged, before the publish goes out.
          save(workspace, `${command.phase} save ${index}`, (id) => {
            committed = true
            post({ _tag: "Committed", index, id, committedAt: now() })
          })
        )
        .then(
          () => undefined,
          // A failed publish after the commit: its hints count as lost.
          (error: unknown) => (committed ? undefined : post({ _tag: "Failed", index, message: String(error) }))
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
