/**
 * The wire schemas the client decodes with: the server's own, imported from
 * where the server declares them, so the two cannot drift apart. None of
 * these modules touches Node (`tsconfig.client.json` checks it).
 */
export { AuditEntry } from "../api/AuditEntry"
export { BulkRejected, BulkWrite, BulkWritten, maxBulkItems } from "../api/BulkWrite"
export type { BulkItem, BulkItemError } from "../api/BulkWrite"
export { LedgerDigest, timelineDefaultLimit } from "../api/AuditApi"
export { CorrelationGroup, CorrelationView, FeedEntry, FeedPage, feedDefaultLimit } from "../api/Feed"
export { Me, SessionState, SignIn } from "../api/AuthApi"
export {
  Broadcast,
  BroadcastData,
  BroadcastType,
  PresenceIntervals,
  Resync,
  StreamEnd,
  StreamEndReason,
  StreamEventName,
  StreamShutdown
} from "../api/Broadcast"
export type { Actor } from "../api/Actor"
export type { Cause, Operation, RevertMode } from "../api/Cause"
export { AsOfEntry, ChangedSince, RecordAsOf, RevertRecord } from "../api/RecordHistory"
export type {
  AddedEntry,
  Changes,
  CollectionChanges,
  FieldChange,
  ModifiedEntry,
  RemovedEntry,
  ValueChange
} from "../api/Changes"
export type { Json, JsonObject } from "../api/Json"
export type { Field, FieldKind, Fields } from "../api/Field"
export { BusinessObjectDefinition } from "../api/BusinessObjectDefinition"
export { ListedBusinessObject } from "../api/BusinessObjectsApi"
export { RecordState, StoredRecord } from "../api/StoredRecord"
export { Editor } from "../api/Editor"
export { CreateRecord, RunAction, recordsDefaultLimit, UpdateRecord } from "../api/RecordsApi"
export { PluginLabels, RecordTitle, RecordTitles } from "../api/RecordTitle"
export {
  backlinksDefaultLimit,
  formatFilter,
  LinkingRecords,
  parseFilter,
  RecordBacklinks,
  RecordList,
  type RecordFilter
} from "../api/RecordQuery"
