import { own } from "../../../src/api/own"
import type { RecordTitles } from "../../../src/api/RecordTitle"
import { looksLikeRecordId } from "../titles/recordId"

interface Subject {
  readonly businessObjectId: string
  /** Titles the service sent beside the row (its own record's among them). */
  readonly titles?: RecordTitles | undefined
}

/**
 * What a row's record is called on the Activity and unit-of-work pages
 * (after its type): its title, marked when the record was deleted since;
 * from a service older than titles, "a record" — never its id.
 */
export const entrySubject = (entry: Subject): string => {
  const known = entry.titles === undefined ? undefined : own(entry.titles, entry.businessObjectId)
  if (known === undefined || known.title === "" || looksLikeRecordId(known.title)) return "(untitled)"
  return known.deleted ? `${known.title} (deleted)` : known.title
}
