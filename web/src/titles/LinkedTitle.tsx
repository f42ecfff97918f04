import { own } from "../../../src/api/own"
import { looksLikeRecordId } from "./recordId"
import { useTitles } from "./TitlesContext"

/**
 * A link value: the linked record's title ("Acme Corporation"), marked when
 * it was deleted since; a record the answer did not know reads "unknown
 * record", never its id.
 */
export const LinkedTitle = ({ id }: { readonly id: string }) => {
  const known = own(useTitles(), id)
  if (known === undefined) return <span className="none">unknown record</span>
  return (
    <span className={known.deleted ? "link-title deleted" : "link-title"}>
      {known.title}
      {known.deleted ? <span className="deleted-mark"> (deleted)</span> : null}
    </span>
  )
}

/** Whether a string value is a link value to show as `LinkedTitle`: one the titles know, or one that reads as a record id. */
export const isLinkValue = (value: string, titles: { readonly [id: string]: unknown }): boolean =>
  Object.hasOwn(titles, value) || looksLikeRecordId(value)
