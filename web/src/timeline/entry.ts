import type { Actor } from "../../../src/api/Actor"
import type { Cause, Operation } from "../../../src/api/Cause"
import type { RecordTitles } from "../../../src/api/RecordTitle"

/**
 * What the timeline renders of an audit entry: the contract's `AuditEntry`,
 * except that values inside `record` and `changes` are hydrated (decimals and
 * plain dates as classes) or raw wire JSON (an entry of a business object the
 * schema no longer knows), and `at` may be hydrated to a `Date`; both render
 * through `ValueView`.
 */
export interface EntryView {
  readonly id: string
  readonly at: string | Date
  readonly actor: Actor
  /** The unit of work it was written in: the correlation view groups it with the rest of its story. */
  readonly correlationId: string
  readonly operation: Operation
  readonly cause: Cause | null
  readonly record?: unknown
  readonly changes?: unknown
  /** Titles of its own record, its cause's and its links' (absent from an older service). */
  readonly titles?: RecordTitles | undefined
}
