import { shortId } from "../labels"

interface Subject {
  readonly businessObjectId: string
  /** The record's title, where the service gives one. */
  readonly title?: string | null | undefined
}

/** What a row's record is called on the Activity and unit-of-work pages (after its type): its title, else its short id. */
export const entrySubject = (entry: Subject): string =>
  entry.title === undefined || entry.title === null || entry.title === ""
    ? shortId(entry.businessObjectId)
    : entry.title
