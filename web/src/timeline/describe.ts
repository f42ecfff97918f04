import { formatDateTime } from "../format/dates"
import { businessObjectLabel, humanize, shortId } from "../labels"
import type { Actor } from "../../../src/api/Actor"
import type { Cause } from "../../../src/api/Cause"

const actorKinds: Record<Actor["kind"], string> = {
  user: "",
  "service-account": "service account",
  system: "system",
  agent: "agent"
}

const workflowPrefix = "workflow:"

/** Who: the name, with the kind when it is not a person signed in; a workflow run by its workflow. */
export const describeActor = (actor: Actor): string => {
  if (actor.kind === "user") return actor.name
  if (actor.kind === "system" && actor.name.startsWith(workflowPrefix)) {
    return `workflow ${actor.name.slice(workflowPrefix.length)}`
  }
  return `${actor.name} (${actorKinds[actor.kind]})`
}

/** Why, one level up: an edit made directly has no cause. */
export const describeCause = (cause: Cause | null): string => {
  if (cause === null) return "direct edit"
  switch (cause.kind) {
    case "event":
      return `after ${businessObjectLabel(cause.businessObject).toLowerCase()} ${shortId(cause.businessObjectId)} was ${cause.operation}`
    case "action":
      if (cause.erase !== undefined) return `erasure of ${describeErasedFields(cause.erase.fields)}`
      return cause.revert === undefined ? `action ${cause.action}` : describeRevert(cause.revert)
    case "job":
      return `job ${cause.job}`
    case "conversation":
      return `agent ${cause.agent.name} in a chat`
  }
}

export const describeOperation = (operation: string): string => humanize(operation)

/** Erased field paths as a person reads them: `address.street` -> "address street"; none: every value. */
export const describeErasedFields = (fields: ReadonlyArray<string>): string =>
  fields.length === 0
    ? "every value"
    : fields
        .map((path) =>
          path
            .split(".")
            .map((segment) => humanize(segment).toLowerCase())
            .join(" ")
        )
        .join(", ")

/** What an entry did: its operation; an erasure with the fields it erased ("Erased email, address street"). */
export const describeEntryOperation = (entry: { readonly operation: string; readonly cause: Cause | null }): string =>
  entry.operation === "erased" && entry.cause?.kind === "action" && entry.cause.erase !== undefined
    ? `Erased ${describeErasedFields(entry.cause.erase.fields)}`
    : describeOperation(entry.operation)

/** When: local date and time to the second (`format/dates.ts`); the exact instant goes in `dateTime`. */
export const describeTime = (at: string | Date): { readonly text: string; readonly iso: string } => {
  const date = typeof at === "string" ? new Date(at) : at
  if (Number.isNaN(date.getTime())) return { text: String(at), iso: String(at) }
  return { text: formatDateTime(date), iso: typeof at === "string" ? at : date.toISOString() }
}

/** What a revert's cause says: which entry it went back to or undid, by its row when known, else by its id. */
export const describeRevert = (
  revert: { readonly entry: string; readonly mode: "restore" | "undo" },
  reverted?: { readonly operation: string; readonly actor: Actor; readonly at: string | Date }
): string => {
  const what =
    reverted === undefined
      ? `entry ${shortId(revert.entry)}`
      : `"${describeOperation(reverted.operation)} by ${describeActor(reverted.actor)}" of ${describeTime(reverted.at).text}`
  return revert.mode === "restore" ? `reverted to ${what}` : `undid ${what}`
}
