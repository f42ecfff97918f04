import { Schema } from "effect"

/** What triggered a write one level up (decisions.md, "cause shapes"). */
export const Operation = Schema.Literals(["created", "updated", "deleted", "archived", "restored", "erased"])
export type Operation = typeof Operation.Type

export const EventCause = Schema.Struct({
  kind: Schema.Literal("event"),
  businessObject: Schema.String,
  businessObjectId: Schema.String,
  operation: Operation
})

/** How a revert treats the entry it names: back to the state as of it, or only its own changes taken back. */
export const RevertMode = Schema.Literals(["restore", "undo"])
export type RevertMode = typeof RevertMode.Type

/**
 * An action cause. A revert (`<ns>/<name>/revert`, docs/history.md) is an
 * action of the service's own: it also names the entry it reverts and how.
 * So is an erasure (`<ns>/<name>/erase`, docs/ledger.md): it names the
 * field paths it erased (none: every value of the record), never a value.
 */
export const ActionCause = Schema.Struct({
  kind: Schema.Literal("action"),
  action: Schema.String,
  revert: Schema.optionalKey(Schema.Struct({ entry: Schema.String, mode: RevertMode })),
  erase: Schema.optionalKey(Schema.Struct({ fields: Schema.Array(Schema.String) }))
})

export const JobCause = Schema.Struct({
  kind: Schema.Literal("job"),
  job: Schema.String,
  jobId: Schema.String
})

export const ConversationCause = Schema.Struct({
  kind: Schema.Literal("conversation"),
  conversationId: Schema.String,
  agent: Schema.Struct({ id: Schema.String, name: Schema.String })
})

export const Cause = Schema.Union([EventCause, ActionCause, JobCause, ConversationCause]).annotate({
  identifier: "Cause"
})
export type Cause = typeof Cause.Type
