import { Schema, SchemaTransformation } from "effect"
import { AuditEntry } from "./AuditEntry"
import { Cause } from "./Cause"
import { queryLimit } from "./QueryLimit"

/** Feed page sizes: `limit` defaults to 100 and is clamped into 1..500. */
export const feedDefaultLimit = 100
export const feedMaxLimit = 500
/** The longest a long-poll (`wait`, seconds) holds a request open: below common proxy timeouts. */
export const feedMaxWaitSeconds = 30
/** The most rows a correlation view shows; past it the view says `truncated`. */
export const correlationMaxRows = 1_000

/**
 * One row of the workspace feed: an audit entry and `cursor`, the feed
 * cursor just after it (send it back to go on from this row).
 */
export class FeedEntry extends AuditEntry.extend<FeedEntry>("FeedEntry")({
  cursor: Schema.String
}) {}

const Hex = (bytes?: number) =>
  Schema.String.check(
    Schema.isPattern(new RegExp(bytes === undefined ? "^(?:[0-9a-f]{2})+$" : `^[0-9a-f]{${bytes * 2}}$`, "u"), {
      message: bytes === undefined ? "bytes in hex" : `${bytes} bytes in hex`
    })
  )

/**
 * One line of the admin feed export: the feed entry and the row's place in
 * the workspace's ledger, all an auditor needs to recompute its content hash
 * and link (docs/ledger.md, "For an auditor"). `position` is a decimal
 * integer; `salt` is null once a value of the row was erased, and
 * `erasedSalts` (JSON Pointer to salt) then holds the salts published for
 * what is left; `hash` is null only on a row written behind the service's
 * back. Readers of the HTTP feed never get these fields.
 */
export class LedgerFeedEntry extends FeedEntry.extend<LedgerFeedEntry>("LedgerFeedEntry")({
  position: Schema.String.check(Schema.isPattern(/^[1-9][0-9]*$/u, { message: "a positive integer" })),
  parentCorrelationId: Schema.NullOr(Schema.String),
  recordVersion: Schema.NullOr(Schema.Int),
  salt: Schema.NullOr(Hex(16)),
  erasedSalts: Schema.NullOr(Schema.Record(Schema.String, Hex())),
  hash: Schema.NullOr(Hex(32))
}) {}

/**
 * A page of the feed, oldest first. `nextCursor` is always set: where the
 * next request goes on from (past rows the filters or permissions left out,
 * too, so a page may be empty and still move on). `more`: rows after it
 * exist already; ask again at once. Otherwise the feed is caught up: ask
 * again later, or with `wait`.
 *
 * Asked with `order=newest`, the page is newest first, of rows before
 * `before` (none: the head); `nextCursor` goes on with older rows (send it as
 * `before`), `more`: older rows exist. Such a page also carries `head`: the
 * feed's end when it was read, the cursor to follow from (SSE, long-poll)
 * for what commits after it.
 */
export class FeedPage extends Schema.Class<FeedPage>("FeedPage")({
  entries: Schema.Array(FeedEntry),
  nextCursor: Schema.String,
  more: Schema.Boolean,
  head: Schema.optionalKey(Schema.String)
}) {}

/** The feed's two reading orders: commit order from a cursor (the default), or newest first, backwards. */
export const FeedOrder = Schema.Literals(["oldest", "newest"])
export type FeedOrder = typeof FeedOrder.Type

const isoInstant = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2}))?$/u

/**
 * A point in time as a query parameter: an ISO-8601 date (`2026-05-01`, UTC
 * midnight) or date-time with `Z` or an offset, to the microsecond.
 */
export const Instant = Schema.String.check(
  Schema.isPattern(isoInstant, {
    message: "an ISO-8601 date or date-time with Z or an offset, e.g. 2026-05-01T12:00:00Z"
  }),
  Schema.makeFilter(
    (text) => {
      // The pattern alone lets 2026-02-30, 25:00 and year 0000 through; PostgreSQL refuses them.
      const [year, month, day] = [Number(text.slice(0, 4)), Number(text.slice(5, 7)), Number(text.slice(8, 10))]
      const calendar = new Date(Date.UTC(year, month - 1, day))
      const realDay = year >= 1 && calendar.getUTCMonth() === month - 1 && calendar.getUTCDate() === day
      const time = /T(\d{2}):(\d{2})(?::(\d{2}))?/.exec(text)
      const offset = /([+-])(\d{2}):(\d{2})$/.exec(text)
      const realTime = time === null || (Number(time[1]) < 24 && Number(time[2]) < 60 && Number(time[3] ?? 0) < 60)
      const realOffset = offset === null || (Number(offset[2]) < 16 && Number(offset[3]) < 60)
      return realDay && realTime && realOffset
    },
    { message: "not a real calendar date and time" }
  )
)

const Uuid = Schema.String.check(
  Schema.isPattern(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/u, {
    message: "a UUID"
  })
)

const Name = (what: string) =>
  Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(200, { message: `${what}: at most 200 characters` }))

/** The feed's query: where to go on from and which rows to keep. Every filter is optional; all must hold. */
export const FeedParams = Schema.Struct({
  cursor: Schema.optional(Schema.String),
  /** `newest`: the page newest first, backwards from `before` (none: the head); JSON pages only. */
  order: Schema.optional(FeedOrder),
  /** With `order=newest`: only rows before this cursor (a page's `nextCursor`, or an entry's `cursor`). */
  before: Schema.optional(Schema.String),
  limit: queryLimit(1, feedMaxLimit, feedDefaultLimit),
  /** `<namespace>/<name>`: only rows of this business object (read permission on it needed). */
  businessObject: Schema.optional(Name("businessObject")),
  /** Only rows of this record id. */
  record: Schema.optional(Name("record")),
  /** Only rows of this actor: its `id`, or a system actor's `name` (`workflow:crm/note-archived-deal`). */
  actor: Schema.optional(Name("actor")),
  correlationId: Schema.optional(Uuid),
  /** Rows whose `at` is at or after this instant. */
  from: Schema.optional(Instant),
  /** Rows whose `at` is before this instant. */
  to: Schema.optional(Instant),
  /** Seconds to hold the request while the feed has nothing new (long-poll); clamped into 0..30. */
  wait: Schema.optional(
    Schema.Int.pipe(
      Schema.decodeTo(
        Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: feedMaxWaitSeconds })),
        SchemaTransformation.transform({
          decode: (seconds: number) => Math.min(feedMaxWaitSeconds, Math.max(0, seconds)),
          encode: (seconds: number) => seconds
        })
      )
    )
  )
})
export type FeedParams = typeof FeedParams.Type

/** The rows of one unit of work that share one cause, in commit order. */
export class CorrelationGroup extends Schema.Class<CorrelationGroup>("CorrelationGroup")({
  correlationId: Schema.String,
  /** The unit whose job or workflow run wrote these rows; null for the unit the view was asked for. */
  parentCorrelationId: Schema.NullOr(Schema.String),
  cause: Schema.NullOr(Cause),
  entries: Schema.Array(AuditEntry)
}) {}

/**
 * Every row of one unit of work and of its cascade (the jobs and workflow
 * runs it started, and theirs), grouped by unit and cause in commit order,
 * only of business objects the caller may read; at most `correlationMaxRows`.
 */
export class CorrelationView extends Schema.Class<CorrelationView>("CorrelationView")({
  correlationId: Schema.String,
  groups: Schema.Array(CorrelationGroup),
  truncated: Schema.Boolean
}) {}

export const CorrelationPath = Schema.Struct({ id: Uuid })
