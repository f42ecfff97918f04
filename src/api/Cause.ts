import { Schema } from "effect"

/** What triggered a write one level up (decisions.md, "cause shapes"). */
export const Operation = Schema.Literal("created", "updated", "deleted", "archived", "restored")
export type Operation = typeof Operation.Type

export const EventCause = Schema.Struct({
  kind: Schema.Literal("event"),
  businessObject: Schema.String,
  businessObjectId: Schema.String,
  operation: Operation
})

export const ActionCause = Schema.Struct({
  kind: Schema.Literal("action"),
  action: Schema.String
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

export const Cause = Schema.Union(EventCause, ActionCause, JobCause, ConversationCause).annotations({
  identifier: "Cause"
})
export type Cause = typeof Cause.Type
