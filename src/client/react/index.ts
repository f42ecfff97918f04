/**
 * The TanStack Query (v5) binding of the client, for React 19: the tab
 * behaviours of the spec.
 *
 * 1. one broadcast stream per workspace per tab, shared by the tabs of the
 *    browser: `<LiveUpdates>` / `useBroadcastInvalidation`; a `resync`
 *    invalidates every query, a 401 calls `onSignedOut`;
 * 2. a `changed` hint invalidates the queries keyed `[businessObject, ...]`,
 *    the same `invalidateBusinessObject` a save (`useSaveRecord`) does;
 * 3. a `presence` hint invalidates `["presence", businessObject]`;
 * 4. `useEditors` refetches every served heartbeat interval;
 * 5. `usePresenceHeartbeat` heartbeats while a form holds unsaved edits and
 *    leaves on save/discard, unmount and `pagehide`.
 *
 * Key convention: `queryKeys.ts`. Documentation: docs/client.md.
 */
export {
  type ConflictChange,
  type ConflictEntry,
  type ConflictSummary,
  conflictFields
} from "./conflictFields"
export { invalidateBusinessObject, invalidatePresence } from "./invalidation"
export { LiveUpdates, type LiveUpdatesProps } from "./LiveUpdates"
export {
  backlinksQuery,
  businessObjectsQuery,
  labelsQuery,
  correlationQuery,
  editorsQuery,
  recordAsOfQuery,
  type FeedFilters,
  feedNewestPagesQuery,
  feedPagesQuery,
  recordPagesQuery,
  recordQuery,
  recordsQuery,
  timelinePagesQuery,
  timelineQuery
} from "./queries"
export {
  backlinksQueryKeys,
  definitionsQueryKey,
  feedQueryKeys,
  presenceQueryKeys,
  recordQueryKeys
} from "./queryKeys"
export { type AttachOptions, attachBroadcast } from "./sharedBroadcast"
export { groupByUnit, type TimelineUnit, type UnitKeyed } from "./timelineUnits"
export { type BroadcastInvalidationOptions, useBroadcastInvalidation } from "./useBroadcastInvalidation"
export { useEditors, type UseEditorsOptions } from "./useEditors"
export { mergeNewestFirst, useLiveFeed } from "./useLiveFeed"
export { type PresenceHeartbeatOptions, usePresenceHeartbeat } from "./usePresenceHeartbeat"
export { type RecordCommand, useRecordCommand } from "./useRecordCommand"
export { type RevertCommand, useRevertRecord } from "./useRevertRecord"
export { type Save, useSaveRecord } from "./useSaveRecord"
export { fallbackPresenceIntervals } from "../broadcast"
