import { describe, expect, it } from "@effect/vitest"
import { Decimal, PlainDate } from "../../../src/client"

describe("Decimal", () => {
  it("keeps the exact wire text, scale included, where a float would round", () => {
    const big = Decimal.parse("12345678901234567890.123456789")
    expect(big.toString()).toBe("12345678901234567890.123456789")
    expect(String(Number("12345678901234567890.123456789"))).not.toBe(big.toString())
    expect(Decimal.parse("1250.00").toString()).toBe("1250.00")
    expect(JSON.stringify({ amount: Decimal.parse("0.10") })).toBe('{"amount":"0.10"}')
  })

  it("toNumber is the nearest float", () => {
    expect(Decimal.parse("-12.50").toNumber()).toBe(-12.5)
    expect(Decimal.parse("0").toNumber()).toBe(0)
  })

  it("equals by value, whatever the scale", () => {
    expect(Decimal.parse("1.5").equals(Decimal.parse("1.50"))).toBe(true)
    expect(Decimal.parse("-0.0").equals(Decimal.parse("0"))).toBe(true)
    expect(Decimal.parse("10").equals(Decimal.parse("1.0"))).toBe(false)
    expect(Decimal.parse("-1").equals(Decimal.parse("1"))).toBe(false)
  })

  it("accepts only the server's wire form", () => {
    for (const bad of ["1e3", "01", "1.", ".5", " 1", "1,5", "+1", "", "NaN"]) {
      expect(() => Decimal.parse(bad), bad).toThrow(RangeError)
      expect(Decimal.isWireForm(bad)).toBe(false)
    }
  })

  it("is immutable", () => {
    const d = Decimal.parse("1.00")
    expect(Object.isFrozen(d)).toBe(true)
    expect(Decimal.isDecimal(d)).toBe(true)
    expect(Decimal.isDecimal("1.00")).toBe(false)
  })
})

describe("PlainDate", () => {
  it("parses yyyy-MM-dd into year, month (1-12), day and prints it back", () => {
    const date = PlainDate.parse("2026-03-01")
    expect([date.year, date.month, date.day]).toEqual([2026, 3, 1])
    expect(date.toString()).toBe("2026-03-01")
    expect(JSON.stringify([date])).toBe('["2026-03-01"]')
    expect(PlainDate.parse("0099-12-31").toString()).toBe("0099-12-31")
  })

  it("is a day, not an instant: no zone can shift it", () => {
    expect(PlainDate.parse("2024-02-29").toString()).toBe("2024-02-29")
  })

  it("refuses days that do not exist and other forms", () => {
    for (const bad of ["2026-02-30", "2025-02-29", "2026-13-01", "2026-3-1", "2026-03-01T00:00:00Z", "20260301"]) {
      expect(() => PlainDate.parse(bad), bad).toThrow(RangeError)
    }
  })

  it("compares and equals", () => {
    const dates = ["2026-03-01", "2025-12-31", "2026-01-15"].map(PlainDate.parse)
    expect([...dates].sort(PlainDate.compare).map(String)).toEqual(["2025-12-31", "2026-01-15", "2026-03-01"])
    expect(PlainDate.parse("2026-03-01").equals(PlainDate.parse("2026-03-01"))).toBe(true)
    expect(Object.isFrozen(dates[0])).toBe(true)
  })
})
