import { PlainDate } from "../../../src/client/hydration/PlainDate"

/**
 * One way the page writes dates and times: the browser's locale, the day as
 * digits as a date input shows it (12/15/2026 in the US, 15/12/2026 in the
 * UK), and a time to the second after it. Every date or time the page shows
 * goes through here (timeline, as-of, Activity, lists), so a field's date
 * reads the same in the form as in its history.
 */
const day = { year: "numeric", month: "2-digit", day: "2-digit" } as const
const time = { hour: "2-digit", minute: "2-digit", second: "2-digit" } as const

export interface DateFormatter {
  /** A calendar day (a `date` field): no zone, never shifted. */
  readonly date: (value: PlainDate) => string
  /** An instant (`at`, a `datetime` field) in the local zone. */
  readonly dateTime: (value: Date) => string
}

/** The formatter of `locale` and `timeZone` (the browser's own when left out). */
export const dateFormatter = (locale?: string, timeZone?: string): DateFormatter => {
  // A PlainDate is written as the instant of its day's midnight in UTC, read in UTC: the same day everywhere.
  const days = new Intl.DateTimeFormat(locale, { ...day, timeZone: "UTC" })
  const instants = new Intl.DateTimeFormat(locale, { ...day, ...time, ...(timeZone === undefined ? {} : { timeZone }) })
  return {
    date: (value) => {
      const midnight = new Date(0)
      // setUTCFullYear, not Date.UTC: that one reads years 0-99 as 1900-1999.
      midnight.setUTCFullYear(value.year, value.month - 1, value.day)
      return days.format(midnight)
    },
    dateTime: (value) => instants.format(value)
  }
}

const browser = dateFormatter()

/** A calendar day as the browser's locale writes it. */
export const formatDate = (value: PlainDate): string => browser.date(value)

/** An instant (a `Date` or ISO-8601 text) as the browser's locale writes it, in local time; text that is no instant as it is. */
export const formatDateTime = (value: Date | string): string => {
  const date = typeof value === "string" ? new Date(value) : value
  return Number.isNaN(date.getTime()) ? String(value) : browser.dateTime(date)
}

/** A day in wire form (`yyyy-MM-dd`) as the browser's locale writes it; anything else as it is. */
export const formatWireDate = (text: string): string =>
  PlainDate.isWireForm(text) ? formatDate(PlainDate.parse(text)) : text
