import { versionTag } from "../api/EntityTag"
import { asChangedSince } from "./changedSince"
import { ResponseShapeError } from "./errors"
import type { Definitions } from "./businessObjects"
import type { HydratedObject } from "./hydration/HydratedValue"
import { toWireObject } from "./hydration/toWire"
import { typeParams } from "./pathParams"
import { randomId } from "./randomId"
import type { Transport } from "./transport"
import { asVersionConflict } from "./versionConflict"
import { BulkWrite } from "./wire"
import type { BulkItem, BulkWritten } from "./wire"
import {
  CreateRecord,
  RecordAsOf,
  RevertRecord,
  RunAction,
  recordsDefaultLimit,
  StoredRecord,
  UpdateRecord
} from "./wire"
import { backlinksDefaultLimit } from "./wire"
import type { RecordBacklinks, RecordList } from "./wire"
import type { RevertMode } from "./wire"

/**
 * Values of a record to write. Wire form (decimals as strings, dates as
 * yyyy-MM-dd, datetimes as ISO-8601 UTC) or hydrated (`Decimal`,
 * `PlainDate`, `Date`): hydrated values are sent in wire form. `null` clears a
 * field; a collection is sent whole, its entries keeping their ids.
 */
export type Values = HydratedObject

/** The options of a write on one existing record. */
export interface WriteOptions {
  /**
   * The version the write is made on (the `version` of the record as shown),
   * sent as `If-Match`; `"*"`: any version, the record must exist. When the
   * record has moved on, the write rejects with a `VersionConflictError`
   * and nothing is written. Without it the write applies to whatever is
   * current (last writer wins): a page that shows a record should always
   * send it.
   */
  readonly ifMatch?: number | "*"
}

/** What a revert asks for (docs/history.md). */
export interface Revert {
  /** The id of an entry on the record's timeline. */
  readonly entry: string
  /** `restore`: the values as they were just after the entry; `undo`: only that update's changes taken back. */
  readonly mode: RevertMode
  /** Undo even when fields it changed were changed again since (else a `ChangedSinceError`). */
  readonly force?: boolean
}

/** What a list page asks for (`GET /api/records/:ns/:name`, docs/web.md, "Lists"). */
export interface ListOptions {
  /** A column of the business object, `updatedAt` or `createdAt` (default: createdAt, newest first). */
  readonly sort?: string
  readonly order?: "asc" | "desc"
  /** `field=value`, `field>=value`, ... (`formatFilter`); all must hold. */
  readonly filter?: ReadonlyArray<string>
  /** Words the title contains, each a word prefix. */
  readonly q?: string
  /** The previous page's `nextCursor`. */
  readonly cursor?: string
  readonly limit?: number
}

export interface RecordsClient {
  /**
   * One page of a list, sorted, filtered and searched as `options` say, with
   * the cursor of the next (null: none). Values stay in wire form.
   */
  readonly page: (businessObject: string, options?: ListOptions) => Promise<RecordList>
  /** `GET .../:id/links`: the records that link to this one, per business object and link field the caller may read. */
  readonly backlinks: (
    businessObject: string,
    id: string,
    options?: { readonly limit?: number }
  ) => Promise<RecordBacklinks>
  /** `GET /api/records/:ns/:name`: the newest records (limit 1..500, default 100). Values stay in wire form. */
  readonly list: (businessObject: string, options?: { readonly limit?: number }) => Promise<ReadonlyArray<StoredRecord>>
  readonly get: (businessObject: string, id: string) => Promise<StoredRecord>
  /**
   * `GET /api/records/:ns/:name/:id?asOf=`: the record as it was just after
   * the timeline entry `asOf` (its id) or at the instant `asOf` (a `Date`, or
   * an ISO-8601 string with its zone), rebuilt from its timeline, with the
   * entry it stands on. Rejects with a 404 `ApiError` when the record did
   * not exist then (not yet, or deleted). Values stay in wire form.
   */
  readonly asOf: (businessObject: string, id: string, asOf: string | Date) => Promise<RecordAsOf>
  /**
   * `POST .../:id/revert`: one update restoring the values as of an entry or
   * undoing one; a stale `ifMatch` rejects with a `VersionConflictError`, an
   * undo of fields changed again since with a `ChangedSinceError`.
   */
  readonly revert: (businessObject: string, id: string, revert: Revert, options?: WriteOptions) => Promise<StoredRecord>
  /** Operational by default; `{ draft: true }` makes a draft (no timeline rows until published). */
  readonly create: (
    businessObject: string,
    values: Values,
    options?: { readonly draft?: boolean }
  ) => Promise<StoredRecord>
  /**
   * `POST /api/records/:ns/:name/bulk` (docs/writes.md, "Bulk writes"): up to
   * 1,000 creates (`{ create: values }`) and updates (`{ update: { id, values,
   * ifMatch? } }`) in one unit of work, all or none; the written records' id,
   * version and ETag in item order. A refused item rejects with an `ApiError`
   * of status 422 whose body (`BulkRejected`) lists every refused item.
   */
  readonly bulk: (businessObject: string, items: ReadonlyArray<BulkItem>) => Promise<BulkWritten>
  /** The given fields replace the current ones. */
  readonly update: (businessObject: string, id: string, values: Values, options?: WriteOptions) => Promise<StoredRecord>
  readonly remove: (businessObject: string, id: string, options?: WriteOptions) => Promise<void>
  readonly publish: (businessObject: string, id: string, options?: WriteOptions) => Promise<StoredRecord>
  readonly archive: (businessObject: string, id: string, options?: WriteOptions) => Promise<StoredRecord>
  readonly restore: (businessObject: string, id: string, options?: WriteOptions) => Promise<StoredRecord>
  /** `POST /api/actions/:ns/:name/:action` on the record `id`, e.g. `("crm/deal", "close", id)`. */
  readonly action: (businessObject: string, action: string, id: string, options?: WriteOptions) => Promise<StoredRecord>
}

/**
 * The headers of every record write: a new `Idempotency-Key`, with which the
 * write is retried on a network fault or a 503 (sendingFetch.ts), so it takes
 * effect at most once. randomId, not crypto.randomUUID: that one is missing
 * on pages served over plain HTTP.
 */
const writeHeaders = () => ({ "idempotency-key": randomId() })

/** A write on one record: `If-Match` when the caller names a version. */
const conditionalHeaders = (options: WriteOptions) => ({
  ...writeHeaders(),
  ...(options.ifMatch === undefined ? {} : { "if-match": options.ifMatch === "*" ? "*" : versionTag(options.ifMatch) })
})

/** Every method is async: a bad argument (a business object without a slash) rejects, it never throws. */
export const recordsClient = (transport: Transport, definitions: Definitions): RecordsClient => {
  const recordPath = (businessObject: string, id: string) => ({ ...typeParams(businessObject), id })
  /** A 412 becomes a `VersionConflictError` with the entries since, hydrated. */
  const conditional = async <A>(businessObject: string, write: Promise<A>): Promise<A> => {
    try {
      return await write
    } catch (error) {
      throw await asVersionConflict(error, definitions, businessObject)
    }
  }
  const lifecycle =
    (step: "publish" | "archive" | "restore") =>
    (businessObject: string, id: string, options: WriteOptions = {}) =>
      conditional(
        businessObject,
        transport.call((api) =>
          api.records[step]({ params: recordPath(businessObject, id), headers: conditionalHeaders(options) })
        )
      )

  return {
    page: (businessObject, options = {}) =>
      transport.call((api) =>
        api.records.list({
          params: typeParams(businessObject),
          query: {
            limit: options.limit ?? recordsDefaultLimit,
            ...(options.sort === undefined ? {} : { sort: options.sort }),
            ...(options.order === undefined ? {} : { order: options.order }),
            ...(options.filter === undefined || options.filter.length === 0 ? {} : { filter: options.filter }),
            ...(options.q === undefined || options.q.trim() === "" ? {} : { q: options.q }),
            ...(options.cursor === undefined ? {} : { cursor: options.cursor })
          }
        })
      ),
    backlinks: (businessObject, id, options = {}) =>
      transport.call((api) =>
        api.records.backlinks({
          params: recordPath(businessObject, id),
          query: { limit: options.limit ?? backlinksDefaultLimit }
        })
      ),
    list: async (businessObject, options = {}) =>
      (
        await transport.call((api) =>
          api.records.list({
            params: typeParams(businessObject),
            query: { limit: options.limit ?? recordsDefaultLimit }
          })
        )
      ).records,
    get: async (businessObject, id) => {
      const record = await transport.call((api) =>
        api.records.get({ params: recordPath(businessObject, id), query: {} })
      )
      if (record instanceof StoredRecord) return record
      throw new ResponseShapeError("GET", `records/${businessObject}/${id}`, "a record as it was, not the record")
    },
    asOf: async (businessObject, id, asOf) => {
      const query = { asOf: typeof asOf === "string" ? asOf : asOf.toISOString() }
      const record = await transport.call((api) => api.records.get({ params: recordPath(businessObject, id), query }))
      if (record instanceof RecordAsOf) return record
      throw new ResponseShapeError(
        "GET",
        `records/${businessObject}/${id}?asOf`,
        "the record, not the record as it was"
      )
    },
    revert: async (businessObject, id, revert, options = {}) => {
      const payload = new RevertRecord({ entry: revert.entry, mode: revert.mode, force: revert.force ?? false })
      const write = transport.call((api) =>
        api.records.revert({ params: recordPath(businessObject, id), payload, headers: conditionalHeaders(options) })
      )
      try {
        return await conditional(businessObject, write)
      } catch (error) {
        throw asChangedSince(error)
      }
    },
    create: (businessObject, values, options = {}) =>
      transport.call((api) =>
        api.records.create({
          params: typeParams(businessObject),
          payload: new CreateRecord({ values: toWireObject(values), draft: options.draft ?? false }),
          headers: writeHeaders()
        })
      ),
    bulk: (businessObject, items) =>
      transport.call((api) =>
        api.records.bulk({
          params: typeParams(businessObject),
          payload: new BulkWrite({ items }),
          headers: writeHeaders()
        })
      ),
    update: (businessObject, id, values, options = {}) =>
      conditional(
        businessObject,
        transport.call((api) =>
          api.records.update({
            params: recordPath(businessObject, id),
            payload: new UpdateRecord({ values: toWireObject(values) }),
            headers: conditionalHeaders(options)
          })
        )
      ),
    remove: (businessObject, id, options = {}) =>
      conditional(
        businessObject,
        transport.call((api) =>
          api.records.remove({ params: recordPath(businessObject, id), headers: conditionalHeaders(options) })
        )
      ),
    publish: lifecycle("publish"),
    archive: lifecycle("archive"),
    restore: lifecycle("restore"),
    action: (businessObject, action, id, options = {}) =>
      conditional(
        businessObject,
        transport.call((api) =>
          api.records.action({
            params: { ...typeParams(businessObject), action },
            payload: new RunAction({ id }),
            headers: conditionalHeaders(options)
          })
        )
      )
  }
}
