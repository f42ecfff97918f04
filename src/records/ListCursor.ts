import { Option, Schema } from "effect"
import { SortOrder } from "../api/RecordQuery"
import { fromJsonText } from "../json/fromJsonText"

/**
 * Where a list page ended: the sort it was made for, the last record's sort
 * key (its value as text; null when the record has none) and its id, which
 * breaks ties. The next page starts strictly after `(key, id)`.
 */
export interface ListCursor {
  readonly sort: string
  readonly order: SortOrder
  readonly key: string | null
  readonly id: string
}

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/u

const Position = Schema.Tuple([
  Schema.String,
  SortOrder,
  Schema.NullOr(Schema.String),
  Schema.String.check(Schema.isPattern(uuid))
])
const decodePosition = Schema.decodeUnknownOption(fromJsonText(Position))

/** Opaque to clients: base64url of `[sort, order, key, id]`. */
export const encodeListCursor = (cursor: ListCursor): string =>
  Buffer.from(JSON.stringify([cursor.sort, cursor.order, cursor.key, cursor.id])).toString("base64url")

/**
 * None for anything that is not a cursor this service made (tampered,
 * truncated, foreign): only the one text `encodeListCursor` makes of a
 * position decodes to it.
 */
export const decodeListCursor = (text: string): Option.Option<ListCursor> => {
  if (!/^[A-Za-z0-9_-]+$/u.test(text)) return Option.none()
  return decodePosition(Buffer.from(text, "base64url").toString("utf8")).pipe(
    Option.map(([sort, order, key, id]): ListCursor => ({ sort, order, key, id })),
    Option.filter((cursor) => encodeListCursor(cursor) === text)
  )
}
