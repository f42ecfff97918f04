import type { Actor } from "../../../src/api/Actor"

/** How the feed's `actor` filter names an actor: its id, or a system actor's name (it has no id). */
export const actorKey = (actor: Actor): string => (actor.kind === "system" ? actor.name : actor.id)
