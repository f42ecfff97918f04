import type { Actor } from "../api/Actor"
import type { Principal } from "../api/Principal"

/** The audit actor of a request's principal (spec, "Actor": user, service account, agent). */
export const actorOf = (principal: Principal): Actor => {
  switch (principal.kind) {
    case "user":
      return { kind: "user", id: principal.id, name: principal.name, email: principal.email ?? "" }
    case "service-account":
      return { kind: "service-account", id: principal.id, name: principal.name }
    case "agent":
      return { kind: "agent", id: principal.id, name: principal.name }
  }
}
