/**
 * The typed client of the audit timeline and broadcast service, for the
 * browser (no Node imports: `tsconfig.client.json` checks it).
 *
 * ```ts
 * import { createClient } from "audit-broadcast-service/client"
 *
 * const client = createClient()                  // same origin; or { baseUrl, fetch, EventSource }
 * await client.auth.login({ workspace: "demo", email: "demo@example.com", password: "demo-password" })
 * const deal = await client.records.create("crm/deal", { title: "Kiosk", amount: "1200.00" })
 * await client.records.update("crm/deal", deal.id, { amount: Decimal.parse("1350.00") })
 * const page = await client.audit.timeline("crm/deal", deal.id, { limit: 20 }) // the newest page
 * page.entries[0]?.changes?.amount               // { from: Decimal 1200.00, to: Decimal 1350.00 }
 * if (page.nextCursor !== null) await client.audit.timeline("crm/deal", deal.id, { cursor: page.nextCursor }) // older
 * const stream = client.broadcast.open()
 * const off = stream.on("changed", ({ businessObject, businessObjectId }) => refetch(businessObject))
 * ```
 *
 * Every call is made by the contract's own client (`HttpApiClient` over
 * `Api`, so no route's path or method is written here again), sends the
 * session cookie (`credentials: "include"`), decodes the answer with the
 * server's own Effect schema (a wrong shape rejects with
 * `ResponseShapeError`) and turns a non-2xx answer into an `ApiError`
 * carrying `status`, `_tag` and `message`. Record writes carry an
 * `Idempotency-Key` and are retried with it on a network fault or a 503
 * (`retry` option). Record values stay in wire form;
 * timeline rows are hydrated (see `./hydration`). The TanStack Query binding
 * is `./react`. Documentation: docs/client.md.
 */
import { auditClient } from "./audit"
import type { AuditClient } from "./audit"
import { authClient } from "./auth"
import type { AuthClient } from "./auth"
import { broadcastClient } from "./broadcast"
import type { BroadcastClient } from "./broadcast"
import { makeDefinitions } from "./businessObjects"
import { presenceClient } from "./presence"
import type { PresenceClient } from "./presence"
import { recordsClient } from "./records"
import type { RecordsClient } from "./records"
import { makeTransport } from "./transport"
import type { ClientOptions } from "./transport"
import type { ListedBusinessObject, PluginLabels } from "./wire"

export interface Client {
  readonly auth: AuthClient
  /**
   * `GET /api/business-objects`: the definitions (current fields, actions,
   * `mayUpdate`) of the types the caller may read. The client keeps the
   * list and sends its ETag back (`If-None-Match`): an unchanged list is a
   * 304 and the kept one is returned. Timelines hydrate against the kept list.
   */
  readonly businessObjects: () => Promise<ReadonlyArray<ListedBusinessObject>>
  /**
   * What a person reads for the plugins' technical names (system actors,
   * jobs, actions, listeners), from the same list as `businessObjects`.
   */
  readonly labels: () => Promise<PluginLabels>
  readonly records: RecordsClient
  readonly audit: AuditClient
  readonly broadcast: BroadcastClient
  readonly presence: PresenceClient
}

export const createClient = (options: ClientOptions = {}): Client => {
  const transport = makeTransport(options)
  const definitions = makeDefinitions(transport)
  return {
    auth: authClient(transport),
    businessObjects: definitions.revalidate,
    labels: definitions.labels,
    records: recordsClient(transport, definitions),
    audit: auditClient(transport, definitions),
    broadcast: broadcastClient(transport),
    presence: presenceClient(transport)
  }
}

export type { AuditClient, FeedOptions, HydratedTimelinePage, TimelineOptions } from "./audit"
export type { FeedFollow, FeedFollowFilters, FeedFollowOptions } from "./feedFollow"
export type { AuthClient, Credentials } from "./auth"
export {
  type BroadcastClient,
  type BroadcastOptions,
  type BroadcastStream,
  fallbackPresenceIntervals,
  type SharedBroadcastOptions
} from "./broadcast"
export { errorsBeforeBackoff } from "./eventStream"
export { type BackoffOptions, defaultBackoff, reconnectDelay } from "./reconnectBackoff"
export type { StreamEventData } from "./streamEvents"
export { browserTabSharing, type TabLocks, type TabSharing, tabLeaderName } from "./tabLeader"
export { ApiError, type ApiErrorTag, ResponseShapeError } from "./errors"
export * from "./hydration"
export type { EditorsByRecord, PresenceClient } from "./presence"
export { randomId } from "./randomId"
export { engineMisreadsKeys, guardJsonParse } from "../json/parseJson"
export { VersionConflictError } from "./versionConflict"
export { ChangedSinceError } from "./changedSince"
/** The record as it was (`records.asOf`): a class, so `instanceof` tells it from a `StoredRecord`. */
export { RecordAsOf } from "./wire"
export type { ListOptions, RecordsClient, Revert, Values, WriteOptions } from "./records"
export type { RetryOptions } from "./retry"
export type { ClientOptions, EventSourceConstructor, EventSourceLike } from "./transport"
export type {
  Actor,
  AsOfEntry,
  AuditEntry,
  BroadcastData,
  BroadcastType,
  BusinessObjectDefinition,
  Cause,
  Changes,
  CorrelationGroup,
  CorrelationView,
  Editor,
  FeedEntry,
  FeedPage,
  Field,
  FieldKind,
  Fields,
  Json,
  JsonObject,
  LedgerDigest,
  ListedBusinessObject,
  Me,
  Operation,
  PresenceIntervals,
  RecordState,
  Resync,
  RevertMode,
  StoredRecord,
  StreamEnd,
  StreamEndReason,
  StreamEventName
} from "./wire"
