/**
 * Timeline hydration: pure functions from frozen wire rows to rows typed
 * against the record's current schema. No I/O; see `hydrateTimeline`.
 */
export { Decimal } from "./Decimal"
export { PlainDate } from "./PlainDate"
export { HydrationError, type WireForm } from "./HydrationError"
export {
  type HydratedAddedEntry,
  type HydratedAuditEntry,
  type HydratedChanges,
  type HydratedCollectionChanges,
  type HydratedFieldChange,
  type HydratedModifiedEntry,
  type HydratedObject,
  type HydratedValue,
  type HydratedValueChange,
  isHydratedValueChange
} from "./HydratedValue"
export { hydrateChanges } from "./hydrateChanges"
export { type Definition, hydrateEntry, hydrateTimeline } from "./hydrateTimeline"
export { hydrateMembers, hydrateValue, type Location } from "./hydrateValue"
export { toWire, toWireChanges, toWireObject } from "./toWire"
export { type ErasedValue, isErased } from "../../api/Erased"
