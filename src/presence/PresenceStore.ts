import type { Effect } from "effect"
import { Context } from "effect"
import type { PubSubUnavailable } from "../api/errors"

/** Which record an editor has open. `workspace` is the workspace id. */
export interface PresenceRecordKey {
  readonly workspace: string
  readonly businessObject: string
  readonly recordId: string
}

/** One open form: the id the form generated, and the user holding it. */
export interface PresenceEditor {
  readonly editorId: string
  readonly userId: string
  readonly name: string
}

/**
 * - `arrived`: the editor was absent (never seen, left, or lapsed) and is now present;
 * - `renewed`: the editor was present and its lapse time moved on;
 * - `held-by-other`: the editor id is live and belongs to another user; nothing changed.
 */
export type TouchOutcome = "arrived" | "renewed" | "held-by-other"

/**
 * - `left`: the editor was present and is now gone;
 * - `absent`: there was no live editor with that id; nothing changed;
 * - `held-by-other`: the editor id is live and belongs to another user; nothing changed.
 */
export type LeaveOutcome = "left" | "absent" | "held-by-other"

/** One heartbeat of `touchAll`. */
export interface PresenceTouch {
  readonly recordId: string
  readonly editor: PresenceEditor
  readonly nowMs: number
  readonly lapseAtMs: number
}

export interface LiveEditor {
  readonly recordId: string
  readonly editorId: string
  readonly userId: string
  readonly name: string
}

/**
 * The presence port: a lapse time per record and editor. Callers pass the
 * current time (`nowMs`, from Effect's Clock) and the lapse time, so the
 * store holds no clock of its own and tests can drive time. Every operation
 * is atomic: two heartbeats racing on one editor give one `arrived`.
 */
export interface PresenceStoreShape {
  readonly touch: (
    key: PresenceRecordKey,
    editor: PresenceEditor,
    nowMs: number,
    lapseAtMs: number
  ) => Effect.Effect<TouchOutcome, PubSubUnavailable>
  /**
   * Several heartbeats on records of one business object of one workspace,
   * applied in order as `touch` would apply them one after the other (two of
   * one new editor: `arrived`, then `renewed`); one outcome each, in order.
   */
  readonly touchAll: (
    workspace: string,
    businessObject: string,
    touches: ReadonlyArray<PresenceTouch>
  ) => Effect.Effect<ReadonlyArray<TouchOutcome>, PubSubUnavailable>
  readonly leave: (
    key: PresenceRecordKey,
    editorId: string,
    userId: string,
    nowMs: number
  ) => Effect.Effect<LeaveOutcome, PubSubUnavailable>
  /** Live editors (lapse time after `nowMs`) of every record of one business object. */
  readonly list: (
    workspace: string,
    businessObject: string,
    nowMs: number
  ) => Effect.Effect<ReadonlyArray<LiveEditor>, PubSubUnavailable>
  readonly kind: "redis" | "in-process"
}

export class PresenceStore extends Context.Service<PresenceStore, PresenceStoreShape>()("PresenceStore") {}
