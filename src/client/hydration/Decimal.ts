import { Schema } from "effect"
import { field } from "../../api/Field"
import { valueSchema } from "../../api/ValueSchema"

/** The server's own wire form of a decimal: `-?(0|[1-9]\d*)(\.\d+)?`. */
const isWireDecimal = Schema.is(valueSchema(field.decimal))

/** Digits without insignificant zeros, so that 1.5 and 1.50 compare equal. */
const canonical = (text: string): string => {
  const negative = text.startsWith("-")
  const [whole = "0", fraction = ""] = (negative ? text.slice(1) : text).split(".")
  const trimmed = fraction.replace(/0+$/, "")
  const digits = trimmed.length > 0 ? `${whole}.${trimmed}` : whole
  return negative && digits !== "0" ? `-${digits}` : digits
}

/**
 * An exact decimal, as a timeline hydrates a `decimal` field.
 *
 * Why not `number`: a decimal travels as a string precisely because a binary
 * float cannot hold it ("0.10" + "0.20" is not "0.30", and a 17th digit is
 * silently rounded). This class keeps the exact wire text, so nothing is lost
 * and `toString()` shows what was stored ("1250.00", scale included);
 * `toNumber()` is there for charts and arithmetic where a float is good
 * enough. It is immutable and has no dependency: it does no arithmetic.
 *
 * Equality is by value: `Decimal.parse("1.5").equals(Decimal.parse("1.50"))`.
 * `JSON.stringify` writes the wire string back.
 */
export class Decimal {
  private constructor(private readonly text: string) {
    Object.freeze(this)
  }

  /** Parses the wire form; throws a RangeError for anything else ("1e3", "01", " 1", "1."). */
  static parse(text: string): Decimal {
    if (!isWireDecimal(text)) throw new RangeError(`not a decimal: ${JSON.stringify(text)}`)
    return new Decimal(text)
  }

  /** Whether `text` is a decimal in wire form. */
  static isWireForm(text: unknown): text is string {
    return isWireDecimal(text)
  }

  static isDecimal(value: unknown): value is Decimal {
    return value instanceof Decimal
  }

  /** The exact text it was parsed from. */
  toString(): string {
    return this.text
  }

  /** The wire form, so `JSON.stringify` round-trips. */
  toJSON(): string {
    return this.text
  }

  /** The nearest float: may round (`toString()` never does). */
  toNumber(): number {
    return Number(this.text)
  }

  /** Same value, whatever the scale: 1.5 equals 1.50, -0 equals 0. */
  equals(other: Decimal): boolean {
    return canonical(this.text) === canonical(other.text)
  }
}
