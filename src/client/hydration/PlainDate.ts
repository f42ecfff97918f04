import { Schema } from "effect"
import { field } from "../../api/Field"
import { valueSchema } from "../../api/ValueSchema"

/** The server's own wire form of a date: `yyyy-MM-dd`, a day that exists. */
const isWireDate = Schema.is(valueSchema(field.date))

const pad = (n: number, width: number) => String(n).padStart(width, "0")

/**
 * A calendar day with no time and no zone, as a timeline hydrates a `date`
 * field. `Temporal.PlainDate` is the standard for this but is not in Node 20
 * nor in every browser yet; a JS `Date` is an instant, and turning
 * "2026-03-01" into one shifts the day in any zone west of UTC. This small
 * immutable class holds `{year, month, day}` (month 1-12) and prints
 * `yyyy-MM-dd`. `JSON.stringify` writes the wire string back.
 */
export class PlainDate {
  private constructor(
    readonly year: number,
    readonly month: number,
    readonly day: number
  ) {
    Object.freeze(this)
  }

  /** Parses `yyyy-MM-dd`; throws a RangeError for anything else, or for a day that does not exist (2026-02-30). */
  static parse(text: string): PlainDate {
    if (!isWireDate(text)) throw new RangeError(`not a date: ${JSON.stringify(text)}`)
    return new PlainDate(Number(text.slice(0, 4)), Number(text.slice(5, 7)), Number(text.slice(8, 10)))
  }

  /** Whether `text` is a date in wire form. */
  static isWireForm(text: unknown): text is string {
    return isWireDate(text)
  }

  static isPlainDate(value: unknown): value is PlainDate {
    return value instanceof PlainDate
  }

  /** Negative, zero or positive as `a` is before, on or after `b` (for sorting). */
  static compare(a: PlainDate, b: PlainDate): number {
    return a.year - b.year || a.month - b.month || a.day - b.day
  }

  /** `yyyy-MM-dd`. */
  toString(): string {
    return `${pad(this.year, 4)}-${pad(this.month, 2)}-${pad(this.day, 2)}`
  }

  toJSON(): string {
    return this.toString()
  }

  equals(other: PlainDate): boolean {
    return PlainDate.compare(this, other) === 0
  }
}
