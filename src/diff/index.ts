export { applyChanges } from "./apply"
export {
  AddedEntry,
  Changes,
  CollectionChanges,
  type FieldChange,
  isCollectionChanges,
  isValueChange,
  ModifiedEntry,
  RemovedEntry,
  ValueChange
} from "./Changes"
export { diffValues } from "./diff"
export { compact, Json, jsonEquals, JsonObject, type RecordValues } from "./Json"
