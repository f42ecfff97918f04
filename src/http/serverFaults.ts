import { Option } from "effect"
import type { DatabaseFault } from "../db/DatabaseFault"
import { Conflict, NotFound, ServiceUnavailable } from "../api/errors"

/** What a request of a workspace that was dropped under it is told (the drop committed: nothing of it is left). */
export const workspaceGoneMessage = "the workspace no longer exists: it has been removed"

const unavailable = (message: string, retryAfter = 1) => Option.some(new ServiceUnavailable({ message, retryAfter }))

/**
 * The HTTP answer to a database fault, for every route (docs/reliability.md,
 * "Database faults"); none for a bug, which stays a 500. A unit of work has
 * already retried what was safe to retry, and rolled back everything else, so
 * apart from a lost COMMIT each answer means "nothing was changed".
 */
export const answerDatabaseFault = (fault: DatabaseFault): Option.Option<ServiceUnavailable | Conflict | NotFound> => {
  switch (fault.kind) {
    case "connection":
      return fault.retryable
        ? unavailable("the database is unavailable; retry later")
        : unavailable("the database is busy: no connection became free in time; retry later", 2)
    case "lock-timeout":
      return unavailable("the data is being changed by another write; retry later")
    case "statement-timeout":
      return unavailable("the database did not answer in time; retry later", 2)
    case "serialization":
      return unavailable("the write collided with concurrent writes and was not applied; retry")
    case "unique-violation":
      return Option.some(new Conflict({ message: "the write conflicts with existing data (a duplicate key)" }))
    case "workspace-gone":
      return Option.some(new NotFound({ message: workspaceGoneMessage }))
    case "commit-outcome-unknown":
      return unavailable(
        "the database connection was lost while committing: the outcome is unknown; read the data before retrying"
      )
    case "bug":
      return Option.none()
  }
}
