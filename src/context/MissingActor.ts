import { Data } from "effect"

/**
 * A write (or an enqueue that would capture the writer) with no actor in
 * context is a bug of the write path, not the caller's to handle: it is
 * raised as a defect, the whole unit of work rolls back, and a route answers
 * it as any bug (500).
 */
export class MissingActor extends Data.TaggedError("MissingActor")<{
  /** What was being done, e.g. "auditing updated of crm/deal 42". */
  readonly while: string
}> {
  override get message() {
    return `no actor in context while ${this.while}`
  }
}
