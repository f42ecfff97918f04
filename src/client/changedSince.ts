import { Result, Schema } from "effect"
import { ChangedSince } from "../api/RecordHistory"
import { ApiError } from "./errors"

/**
 * An undo refused with 409 `ChangedSince`: fields the undone entry changed
 * were changed again by later entries (`fields`), nothing was written. Send
 * the revert again with `force: true` to overwrite them (docs/history.md).
 */
export class ChangedSinceError extends ApiError {
  constructor(
    message: string,
    body: unknown,
    /** The fields changed again since the entry, in declared order. */
    readonly fields: ReadonlyArray<string>
  ) {
    super(409, "ChangedSince", message, body)
  }
}

const decodeChangedSince = Schema.decodeUnknownResult(ChangedSince)

/** The `ChangedSinceError` of a 409 whose body is the contract's `ChangedSince`; any other rejection as it was. */
export const asChangedSince = (error: unknown): unknown => {
  if (!(error instanceof ApiError) || error.status !== 409) return error
  const decoded = decodeChangedSince(error.body)
  return Result.isFailure(decoded)
    ? error
    : new ChangedSinceError(decoded.success.message, error.body, decoded.success.fields)
}
