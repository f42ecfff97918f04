import { formatDateTime } from "../format/dates"
import { businessObjectLabel, humanize } from "../labels"
import type { Actor } from "../../../src/api/Actor"
import type { Cause } from "../../../src/api/Cause"
import type { PluginLabels, RecordTitles } from "../../../src/api/RecordTitle"
import { own } from "../../../src/api/own"

const actorKinds: Record<Actor["kind"], string> = {
  user: "",
  "service-account": "service account",
  system: "system",
  agent: "agent"
}

/** What the page knows to name things by: the plugins' labels and the titles an answer carried. */
export interface Naming {
  readonly labels?: PluginLabels | undefined
  readonly titles?: RecordTitles | undefined
  /** Who wrote the row: a row without a cause reads by who wrote it (a person's direct edit, seed data). */
  readonly actor?: Actor | undefined
}

/** The last segment of a technical name, in words: `crm/follow-up` -> "Follow up". */
const lastWords = (name: string) => humanize(name.slice(name.lastIndexOf("/") + 1))

/** A system actor's label: the plugin's, else made from its name ("Seed data", "Workflow: Note archived deal"). */
const systemActorLabel = (name: string, labels: PluginLabels | undefined): string => {
  const declared = labels === undefined ? undefined : own(labels.actors, name)
  if (declared !== undefined) return declared
  if (name.startsWith("seeder:")) return "Seed data"
  if (name.startsWith("workflow:")) return `Workflow: ${lastWords(name).toLowerCase()}`
  return humanize(name.replace(/^[^:]*:/u, ""))
}

/** Who: a person by name; others by their label with their kind ("importer (service account)"), never a machine name. */
export const describeActor = (actor: Actor, naming: Naming = {}): string => {
  if (actor.kind === "user") return actor.name
  if (actor.kind === "system") return systemActorLabel(actor.name, naming.labels)
  return `${actor.name} (${actorKinds[actor.kind]})`
}

/** The technical name behind what `describeActor` says, for a hover; none for a person. */
export const actorTechnicalName = (actor: Actor): string | undefined =>
  actor.kind === "user" ? undefined : actor.kind === "system" ? actor.name : `${actor.kind} ${actor.name}`

/** A record an answer named, by its title ("Kiosk", "Acme (deleted)"); else by its type alone. */
export const describeRecord = (businessObject: string, id: string, titles: RecordTitles | undefined): string => {
  const known = titles === undefined ? undefined : own(titles, id)
  const type = businessObjectLabel(businessObject).toLowerCase()
  if (known === undefined) return `a ${type}`
  return `${type} "${known.title}"${known.deleted ? " (deleted)" : ""}`
}

/** The technical name behind a cause, for a hover (`crm/deal/close`, `crm/follow-up`); none for the rest. */
export const causeTechnicalName = (cause: Cause | null): string | undefined => {
  if (cause?.kind === "action" && cause.revert === undefined && cause.erase === undefined) return cause.action
  if (cause?.kind === "job") return cause.job
  return undefined
}

/** Why, one level up: a person's edit made directly has no cause; neither has seed data nor a workflow's own write. */
export const describeCause = (cause: Cause | null, naming: Naming = {}): string => {
  if (cause === null) {
    if (naming.actor?.kind !== "system") return "direct edit"
    return naming.actor.name.startsWith("seeder:") ? "with the workspace" : "automatically"
  }
  switch (cause.kind) {
    case "event":
      return `after ${describeRecord(cause.businessObject, cause.businessObjectId, naming.titles)} was ${cause.operation}`
    case "action": {
      if (cause.erase !== undefined) return `erasure of ${describeErasedFields(cause.erase.fields)}`
      if (cause.revert !== undefined) return describeRevert(cause.revert)
      const label = naming.labels === undefined ? undefined : own(naming.labels.actions, cause.action)
      return `action "${label ?? lastWords(cause.action)}"`
    }
    case "job": {
      const label = naming.labels === undefined ? undefined : own(naming.labels.jobs, cause.job)
      return `background job "${label ?? lastWords(cause.job)}"`
    }
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
  reverted?: { readonly operation: string; readonly actor: Actor; readonly at: string | Date },
  naming: Naming = {}
): string => {
  const what =
    reverted === undefined
      ? "an earlier entry"
      : `"${describeOperation(reverted.operation)} by ${describeActor(reverted.actor, naming)}" of ${describeTime(reverted.at).text}`
  return revert.mode === "restore" ? `reverted to ${what}` : `undid ${what}`
}
