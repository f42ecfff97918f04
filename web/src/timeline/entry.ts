/**
 * What the timeline renders of an audit entry. Values inside `record` and
 * `changes` are hydrated (decimals and plain dates as classes) or raw wire
 * JSON (an entry of a business object the schema no longer knows); both
 * render through `ValueView`.
 */
export type ActorView =
  | { readonly kind: "user"; readonly name: string; readonly email?: string }
  | { readonly kind: "service-account" | "agent"; readonly name: string }
  | { readonly kind: "system"; readonly name: string }

export type CauseView =
  | { readonly kind: "event"; readonly businessObject: string; readonly businessObjectId: string; readonly operation: string }
  | { readonly kind: "action"; readonly action: string }
  | { readonly kind: "job"; readonly job: string }
  | { readonly kind: "conversation"; readonly agent: { readonly name: string } }

export interface EntryView {
  readonly id: string
  readonly at: string | Date
  readonly actor: ActorView
  readonly operation: string
  readonly cause: CauseView | null
  readonly record?: unknown
  readonly changes?: unknown
}
