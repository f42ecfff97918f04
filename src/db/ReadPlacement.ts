import { Context, Effect } from "effect"

/**
 * Where the routed reads (`ReadSqlClient`) of this fiber go when a replica is
 * configured; without one every read is on the primary whatever this says.
 *
 * - `replica`: the replica, while it answers and keeps up;
 * - `after`: the replica once it has replayed `lsn` (a position the caller
 *   saw on a write's answer), waited for within a bound, else the primary;
 * - `primary`: the primary (work outside a request, readers that follow the
 *   feed live).
 */
export type ReadPlacementShape =
  | { readonly _tag: "replica" }
  | { readonly _tag: "after"; readonly lsn: bigint }
  | { readonly _tag: "primary" }

/** Outside a request reads stay on the primary: only the HTTP edge sends them to the replica. */
export const ReadPlacement = Context.Reference<ReadPlacementShape>("ReadPlacement", {
  defaultValue: () => ({ _tag: "primary" })
})

/** `effect` with its routed reads on the primary. */
export const readingPrimary = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.provideService(effect, ReadPlacement, { _tag: "primary" })

/** Keeps the commit positions of the transactions a request committed (the highest one counts). */
export interface CommitRecorderShape {
  /** False when nothing keeps them: the write path then asks PostgreSQL for none. */
  readonly active: boolean
  readonly record: (lsn: bigint) => void
}

export const CommitRecorder = Context.Reference<CommitRecorderShape>("CommitRecorder", {
  defaultValue: () => ({ active: false, record: () => {} })
})
