import { Option } from "effect"
import type { Actor } from "../api/Actor"

/**
 * The actor as span attributes: `actor.kind` and `actor.id` (a system actor,
 * which has no id, gives its name: `workflow:<id>`, `seeder:<plugin>`);
 * `actor.kind` `none` when the fiber runs as nobody. Names and emails stay
 * out of traces.
 */
export const actorSpanAttributes = (actor: Option.Option<Actor>): Record<string, string> =>
  Option.match(actor, {
    onNone: () => ({ "actor.kind": "none" }),
    onSome: (a) => ({ "actor.kind": a.kind, "actor.id": a.kind === "system" ? a.name : a.id })
  })
