/**
 * The wire schemas the client decodes with: the server's own, imported from
 * where the server declares them, so the two cannot drift apart. None of
 * these modules touches Node (`tsconfig.client.json` checks it).
 */
export { AuditEntry, TimelinePage } from "../audit/AuditEntry"
export { Me, SignIn } from "../auth/AuthApi"
export { Broadcast, BroadcastData, BroadcastType } from "../broadcast/Broadcast"
export type { Actor } from "../context/Actor"
export type { Cause, Operation } from "../context/Cause"
export type { AddedEntry, Changes, CollectionChanges, FieldChange, ModifiedEntry, RemovedEntry, ValueChange } from "../diff/Changes"
export type { Json, JsonObject } from "../diff/Json"
export type { Field, FieldKind, Fields } from "../fields/Field"
export { BusinessObjectList } from "../plugins/BusinessObjectsApi"
export { BusinessObjectDefinition } from "../plugins/Plugin"
export { RecordState, StoredRecord } from "../plugins/PluginRecords"
export { Editor, PresenceList } from "../presence/Editor"
export { CreateRecord, RecordList, RunAction, UpdateRecord } from "../records/RecordsApi"
