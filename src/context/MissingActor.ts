import { Data } from "effect"

/** Recording audit with no actor in context is a fault: the whole unit of work rolls back. */
export class MissingActor extends Data.TaggedError("MissingActor")<{
  readonly businessObject: string
  readonly businessObjectId: string
  readonly operation: string
}> {
  override get message() {
    return `no actor in context while auditing ${this.operation} of ${this.businessObject} ${this.businessObjectId}`
  }
}
