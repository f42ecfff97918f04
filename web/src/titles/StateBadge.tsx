import type { RecordState } from "../../../src/api/StoredRecord"

const shown: Record<RecordState, string | undefined> = { operational: undefined, draft: "Draft", archived: "Archived" }

/** A record's lifecycle state where a person would want to know it: nothing for a live record, "Draft", "Archived". */
export const StateBadge = ({ state }: { readonly state: RecordState }) => {
  const text = shown[state]
  return text === undefined ? null : <span className={`state state-${state}`}>{text}</span>
}
