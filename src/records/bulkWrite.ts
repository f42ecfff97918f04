import { Effect, Result } from "effect"
import { BulkRejected, BulkWritten, maxBulkItems } from "../api/BulkWrite"
import type { BulkItem, BulkItemError } from "../api/BulkWrite"
import { parseIfMatch, versionTag } from "../api/EntityTag"
import type { VersionPrecondition } from "../api/EntityTag"
import { UnprocessableEntity } from "../api/errors"
import type { PreconditionFailed } from "../api/errors"
import type { WriteError } from "../plugins/PluginRecords"
import type { Records } from "./Records"
import type { WrittenRecord } from "./RecordStore"

type ItemError = WriteError | PreconditionFailed

const statusOf: Record<ItemError["_tag"], number> = {
  BadRequest: 400,
  NotFound: 404,
  Conflict: 409,
  PreconditionFailed: 412,
  UnprocessableEntity: 422
}

/** An item's refusal as the 422 lists it: what a single write of the item would have answered. */
const itemError = (index: number, error: ItemError): BulkItemError => ({
  index,
  status: statusOf[error._tag],
  _tag: error._tag,
  message: error.message,
  ...(error._tag === "PreconditionFailed" ? { currentVersion: error.currentVersion } : {})
})

const precondition = (ifMatch: number | string | undefined): VersionPrecondition => {
  if (typeof ifMatch === "number") return { _tag: "Version", version: ifMatch }
  // The string passed `IfMatch`, which takes what `parseIfMatch` parses.
  return (ifMatch === undefined ? undefined : parseIfMatch(ifMatch)) ?? { _tag: "AnyVersion" }
}

const isCreate = (item: BulkItem | undefined): item is Extract<BulkItem, { readonly create: unknown }> =>
  item !== undefined && "create" in item

/**
 * A bulk write (docs/writes.md, "Bulk writes") inside the unit of work in
 * progress: the items in order, each as its single write would be (a stale
 * `ifMatch` is the item's 412), every run of consecutive creates written by
 * one INSERT. Every item is checked even after one is refused, so that the
 * 422 `BulkRejected` names them all; the unit then rolls back: nothing is
 * written. 0 or more than `maxBulkItems` items: a 422 before anything runs.
 */
export const bulkWrite = (records: Records["Service"], businessObject: string, items: ReadonlyArray<BulkItem>) =>
  Effect.gen(function* () {
    if (items.length === 0 || items.length > maxBulkItems) {
      return yield* new UnprocessableEntity({
        message: `a bulk write takes 1 to ${maxBulkItems.toLocaleString("en-US")} items, not ${items.length.toLocaleString("en-US")}: send them in several requests; nothing was written`
      })
    }
    yield* records.businessObjectOf(businessObject)
    const refused: Array<BulkItemError> = []
    const written: Array<WrittenRecord> = []
    for (let index = 0; index < items.length; ) {
      const item = items[index]
      if (isCreate(item)) {
        let end = index + 1
        while (isCreate(items[end])) end++
        const creates = items.slice(index, end).flatMap((one) => (isCreate(one) ? [one.create] : []))
        const result = yield* records.createMany(businessObject, creates)
        if (Result.isFailure(result)) {
          for (const failure of result.failure) refused.push(itemError(index + failure.index, failure.error))
        } else written.push(...result.success)
        index = end
      } else if (item !== undefined) {
        const { id, values, ifMatch } = item.update
        const result = yield* Effect.result(
          Effect.andThen(
            records.requireVersion(businessObject, id, precondition(ifMatch)),
            records.update(businessObject, id, values)
          )
        )
        if (Result.isFailure(result)) refused.push(itemError(index, result.failure))
        else written.push(result.success)
        index++
      }
    }
    const first = refused[0]
    if (first !== undefined) {
      return yield* new BulkRejected({
        message: `${refused.length} of ${items.length} items refused, nothing was written; the first, item ${first.index}: ${first.message}`,
        items: refused
      })
    }
    return new BulkWritten({
      records: written.map((record) => ({ id: record.id, version: record.version, etag: versionTag(record.version) }))
    })
  })
