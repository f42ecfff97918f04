import type { Actor } from "../../../src/api/Actor"
import { actorTechnicalName, describeActor } from "../timeline/describe"
import { useNaming } from "./naming"

/** Who, as a person reads it ("Seed data (CRM)", "Workflow: Note on archived deals"); the technical name on hover. */
export const ActorName = ({ actor }: { readonly actor: Actor }) => {
  const naming = useNaming()
  const technical = actorTechnicalName(actor)
  return (
    <span className="actor" title={technical}>
      {describeActor(actor, naming)}
    </span>
  )
}
