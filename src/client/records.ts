import { Schema } from "effect"
import type { HydratedObject } from "./hydration/HydratedValue"
import { toWireObject } from "./hydration/toWire"
import { segment, typeSegments } from "./paths"
import type { Transport } from "./transport"
import { CreateRecord, RecordList, RunAction, StoredRecord, UpdateRecord } from "./wire"

/**
 * Values of a record to write. Wire form (decimals as strings, dates as
 * yyyy-MM-dd, datetimes as ISO-8601 UTC) or hydrated (`Decimal`,
 * `PlainDate`, `Date`): hydrated values are sent in wire form. `null` clears a
 * field; a collection is sent whole, its entries keeping their ids.
 */
export type Values = HydratedObject

export interface RecordsClient {
  /** `GET /api/records/:ns/:name`: the newest records (limit 1..500, default 100). Values stay in wire form. */
  readonly list: (businessObject: string, options?: { readonly limit?: number }) => Promise<ReadonlyArray<StoredRecord>>
  readonly get: (businessObject: string, id: string) => Promise<StoredRecord>
  /** Operational by default; `{ draft: true }` makes a draft (no timeline rows until published). */
  readonly create: (
    businessObject: string,
    values: Values,
    options?: { readonly draft?: boolean }
  ) => Promise<StoredRecord>
  /** The given fields replace the current ones. */
  readonly update: (businessObject: string, id: string, values: Values) => Promise<StoredRecord>
  readonly remove: (businessObject: string, id: string) => Promise<void>
  readonly publish: (businessObject: string, id: string) => Promise<StoredRecord>
  readonly archive: (businessObject: string, id: string) => Promise<StoredRecord>
  readonly restore: (businessObject: string, id: string) => Promise<StoredRecord>
  /** `POST /api/actions/:ns/:name/:action` on the record `id`, e.g. `("crm/deal", "close", id)`. */
  readonly action: (businessObject: string, action: string, id: string) => Promise<StoredRecord>
}

/**
 * Every method is async: a bad argument (a business object without a slash)
 * rejects, it never throws. Every write carries a new `Idempotency-Key` and is
 * retried with it on a network fault or a 503, so it takes effect at most once.
 */
export const recordsClient = (transport: Transport): RecordsClient => {
  const typePath = (businessObject: string) => `/api/records/${typeSegments(businessObject)}`
  const recordPath = (businessObject: string, id: string) => `${typePath(businessObject)}/${segment(id)}`
  const lifecycle = (step: "publish" | "archive" | "restore") => async (businessObject: string, id: string) =>
    transport.json(StoredRecord, "POST", `${recordPath(businessObject, id)}/${step}`, { idempotent: true })

  return {
    list: async (businessObject, options = {}) => {
      const query = options.limit === undefined ? "" : `?limit=${encodeURIComponent(options.limit)}`
      return (await transport.json(RecordList, "GET", `${typePath(businessObject)}${query}`)).records
    },
    get: async (businessObject, id) => transport.json(StoredRecord, "GET", recordPath(businessObject, id)),
    create: async (businessObject, values, options = {}) =>
      transport.json(StoredRecord, "POST", typePath(businessObject), {
        body: Schema.encodeSync(CreateRecord)(
          new CreateRecord({ values: toWireObject(values), draft: options.draft ?? false })
        ),
        idempotent: true
      }),
    update: async (businessObject, id, values) =>
      transport.json(StoredRecord, "PATCH", recordPath(businessObject, id), {
        body: Schema.encodeSync(UpdateRecord)(new UpdateRecord({ values: toWireObject(values) })),
        idempotent: true
      }),
    remove: async (businessObject, id) =>
      transport.send("DELETE", recordPath(businessObject, id), { idempotent: true }),
    publish: lifecycle("publish"),
    archive: lifecycle("archive"),
    restore: lifecycle("restore"),
    action: async (businessObject, action, id) =>
      transport.json(StoredRecord, "POST", `/api/actions/${typeSegments(businessObject)}/${segment(action)}`, {
        body: Schema.encodeSync(RunAction)(new RunAction({ id })),
        idempotent: true
      })
  }
}
