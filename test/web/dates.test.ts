import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { PlainDate } from "../../src/client/hydration/PlainDate"
import { dateFormatter, formatWireDate } from "../../web/src/format/dates"

/** One way the page writes dates: the locale's day as a date input shows it, the same in every place and zone. */

const day = (text: string) => PlainDate.parse(text)

describe("dateFormatter", () => {
  it("writes a day as the locale's date input does: 12/15/2026 in the US, 15/12/2026 in the UK", () => {
    expect(dateFormatter("en-US").date(day("2026-12-15"))).toBe("12/15/2026")
    expect(dateFormatter("en-GB").date(day("2026-12-15"))).toBe("15/12/2026")
    expect(dateFormatter("de-DE").date(day("2026-12-15"))).toBe("15.12.2026")
  })

  it("never shifts a day, whatever the zone (a calendar day has none)", () => {
    for (const zone of ["Pacific/Kiritimati", "Pacific/Pago_Pago", "UTC"]) {
      expect(dateFormatter("en-US", zone).date(day("2026-03-01"))).toBe("03/01/2026")
    }
    // Year 42, not 1942 (Date.UTC would read it so).
    expect(dateFormatter("en-US").date(day("0042-01-31"))).toBe("01/31/42")
  })

  it("writes an instant with the same day part, then the time to the second", () => {
    const at = new Date("2026-12-15T09:30:05Z")
    expect(dateFormatter("en-US", "UTC").dateTime(at)).toBe("12/15/2026, 09:30:05 AM")
    expect(dateFormatter("en-GB", "UTC").dateTime(at)).toBe("15/12/2026, 09:30:05")
  })

  it("a day in wire form is written as the locale's day; other text is left as it is", () => {
    expect(formatWireDate("2026-12-15")).toBe(dateFormatter().date(day("2026-12-15")))
    expect(formatWireDate("Acme")).toBe("Acme")
  })

  it.prop(
    "an instant's day part is the day of that instant in the zone, as a date field of that day is written",
    {
      ms: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 4_102_444_800_000 })),
      locale: Schema.Literals(["en-US", "en-GB", "de-DE", "fr-FR", "ja-JP"]),
      zone: Schema.Literals(["UTC", "America/New_York", "Asia/Tokyo"])
    },
    ({ ms, locale, zone }) => {
      const at = new Date(ms)
      const parts = new Intl.DateTimeFormat("en-CA", {
        timeZone: zone,
        year: "numeric",
        month: "2-digit",
        day: "2-digit"
      })
      const formatter = dateFormatter(locale, zone)
      expect(formatter.dateTime(at).startsWith(formatter.date(day(parts.format(at))))).toBe(true)
    }
  )
})
