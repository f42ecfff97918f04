import { Option, Schema } from "effect"
import { fromJsonText } from "../json/fromJsonText"

/**
 * A keyset position on a timeline: the `seq` of the last row served. A
 * record's rows are served in `seq` order, which is its commit order (see
 * docs/audit.md, "Order"), so the next page starts exactly after it.
 */
export interface CursorPosition {
  readonly seq: string
}

const maxBigint = 9223372036854775807n

const Seq = Schema.String.check(
  Schema.isPattern(/^[1-9]\d{0,18}$/),
  Schema.makeFilter((seq) => BigInt(seq) <= maxBigint)
)

const isoMicros = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/
/** A real calendar instant PostgreSQL accepts: the pattern alone would let 2026-02-30 or year 0000 through. */
const isRealInstant = (at: string) => {
  const parsed = new Date(at)
  return (
    !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 19) === at.slice(0, 19) && !at.startsWith("0000")
  )
}
const At = Schema.String.check(Schema.isPattern(isoMicros), Schema.makeFilter(isRealInstant))

/**
 * `[seq]` is today's cursor. `[at, seq]` is the one served before timelines
 * followed commit order; it names its last row by the same `seq`, so a
 * client holding one across the upgrade pages on from that row.
 */
const Position = Schema.Union([Schema.Tuple([Seq]), Schema.Tuple([At, Seq])])
const decodePosition = Schema.decodeUnknownOption(fromJsonText(Position))

/** Opaque to clients: base64url of `[seq]`. */
export const encodeCursor = (position: CursorPosition): string =>
  Buffer.from(JSON.stringify([position.seq])).toString("base64url")

/** None for anything that is not a cursor this service made (tampered, truncated, foreign). */
export const decodeCursor = (cursor: string): Option.Option<CursorPosition> => {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return Option.none()
  return decodePosition(Buffer.from(cursor, "base64url").toString("utf8")).pipe(
    Option.map((position) => ({ seq: position.length === 1 ? position[0] : position[1] }))
  )
}
