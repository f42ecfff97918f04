import { Result, Schema } from "effect"
import { PreconditionFailed } from "../api/errors"
import { hydrateWithDefinitions } from "./audit"
import type { Definitions } from "./businessObjects"
import { ApiError } from "./errors"
import type { HydratedAuditEntry } from "./hydration/HydratedValue"

/**
 * A write sent with `ifMatch` on a version the record has moved on from:
 * the service's 412 `PreconditionFailed`, nothing written. It carries what
 * happened since that version, so a page can show who changed what and
 * offer to send the write again on `currentVersion` (docs/writes.md).
 */
export class VersionConflictError extends ApiError {
  constructor(
    message: string,
    body: unknown,
    /** The record's version now; null when it was deleted since. */
    readonly currentVersion: number | null,
    /** The timeline entries written since the caller's version, **oldest first**, hydrated (at most 100: the newest). */
    readonly entries: ReadonlyArray<HydratedAuditEntry>,
    /** More than `entries` were written since (the older ones are on the timeline). */
    readonly moreEntries: boolean
  ) {
    super(412, "PreconditionFailed", message, body)
  }
}

const decodeConflict = Schema.decodeUnknownResult(PreconditionFailed)

/**
 * The `VersionConflictError` of a write's rejection when it is a 412 whose
 * body the contract's `PreconditionFailed` decodes (its entries hydrated as
 * the timeline's are); any other rejection as it was.
 */
export const asVersionConflict = async (
  error: unknown,
  definitions: Definitions,
  businessObject: string
): Promise<unknown> => {
  if (!(error instanceof ApiError) || error.status !== 412) return error
  const decoded = decodeConflict(error.body)
  if (Result.isFailure(decoded)) return error
  const { message, currentVersion, entries, moreEntries } = decoded.success
  // The entries are shown as well as they can be: raw (wire form) when the definitions cannot be had or do not fit.
  const hydrated = await definitions
    .current(businessObject)
    .then((kept) => hydrateWithDefinitions(definitions, kept, entries))
    .catch(() => entries)
  return new VersionConflictError(message, error.body, currentVersion, hydrated, moreEntries)
}
