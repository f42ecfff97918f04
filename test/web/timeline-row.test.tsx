// @vitest-environment jsdom
import { cleanup, render, within } from "@testing-library/react"
import { afterEach, describe, expect, it } from "vitest"
import type { AuditEntry, Fields } from "../../src/client"
import { hydrateTimeline } from "../../src/client"
import { PlainDate } from "../../src/client/hydration/PlainDate"
import { formatDate } from "../../web/src/format/dates"
import { indexEntries } from "../../web/src/timeline/entryIndex"
import { TimelineRow } from "../../web/src/timeline/TimelineRow"

/**
 * How a timeline row reads, from wire rows hydrated by the client as the
 * page gets them: every kind of change spelled out, in field order.
 */

const fields: Fields = {
  title: { kind: "string" },
  amount: { kind: "decimal" },
  closeDate: { kind: "date" },
  signedAt: { kind: "datetime" },
  won: { kind: "boolean" },
  address: { kind: "struct", fields: { street: { kind: "string" }, city: { kind: "string" } } },
  lineItems: {
    kind: "collection",
    fields: { product: { kind: "string" }, quantity: { kind: "number" }, price: { kind: "decimal" } }
  }
}

const base = {
  at: "2026-03-01T09:30:00.123456Z",
  correlationId: "c-1",
  businessObject: "crm/deal",
  businessObjectId: "d-1"
}

const created: AuditEntry = {
  ...base,
  id: "row-1",
  actor: { kind: "user", id: "u-1", name: "Ada Lovelace", email: "ada@example.com" },
  operation: "created",
  cause: null,
  record: {
    won: false,
    title: "Kiosk",
    lineItems: [
      { id: "li-1", price: "450.00", product: "Kiosk", quantity: 2 },
      { id: "li-2", price: "300.00", product: "Installation", quantity: 1 }
    ],
    amount: "1200.00"
  }
}

const updated: AuditEntry = {
  ...base,
  id: "row-2",
  actor: { kind: "service-account", id: "k-1", name: "importer" },
  operation: "updated",
  cause: { kind: "action", action: "crm/deal/close" },
  changes: {
    lineItems: {
      added: [{ id: "li-3", values: { price: "80.00", product: "Stand" } }],
      modified: [{ id: "li-1", changes: { quantity: { from: 2, to: 3 } } }],
      removed: [{ id: "li-2" }]
    },
    address: { from: null, to: { city: "Oslo", street: "1 Harbour Road" } },
    amount: { from: "1200.00", to: "1350.00" },
    closeDate: { from: null, to: "2026-12-15" },
    won: { from: false, to: true }
  }
}

const [newest, oldest] = hydrateTimeline([{ name: "crm/deal", fields }], [updated, created])
if (newest === undefined || oldest === undefined) throw new Error("no rows")
const entries = indexEntries(fields, [newest, oldest], undefined)

afterEach(cleanup)

/** The text as read aloud: the cells and terms of tables and lists apart. */
const textOf = (element: Element) => {
  const copy = element.cloneNode(true) as Element
  for (const cell of copy.querySelectorAll("dt, dd, th, td")) cell.append(" ")
  return (copy.textContent ?? "").replace(/\s+/g, " ").trim()
}

describe("a timeline row", () => {
  it("says what happened, who did it, when and why", () => {
    const { getByRole } = render(<TimelineRow entry={newest} fields={fields} entries={entries} />)
    const row = getByRole("article", { name: "Updated by importer (service account)" })
    expect(textOf(row)).toContain('action "Close"')
    expect(row.querySelector("time")?.getAttribute("dateTime")).toBe("2026-03-01T09:30:00.123456Z")
  })

  it("lists changed fields in their declared order, scalars as from → to", () => {
    const { container } = render(<TimelineRow entry={newest} fields={fields} entries={entries} />)
    const names = [...container.querySelectorAll("article > .changes > .change > dt")].map(textOf)
    expect(names).toEqual(["Amount", "Close date", "Won", "Address", "Line items"])
    const amount = container.querySelector("article > .changes > .change:nth-child(1) > dd")
    expect(amount && textOf(amount)).toBe("1200.00 → 1350.00")
    const closeDate = container.querySelector("article > .changes > .change:nth-child(2) > dd")
    // A date as the form's date input shows it: the locale's day, not the wire form.
    expect(closeDate && textOf(closeDate)).toBe(`none → ${formatDate(PlainDate.parse("2026-12-15"))}`)
    const won = container.querySelector("article > .changes > .change:nth-child(3) > dd")
    expect(won && textOf(won)).toBe("no → yes")
  })

  it("shows a struct's two values side by side, member by member", () => {
    const { getByRole } = render(<TimelineRow entry={newest} fields={fields} entries={entries} />)
    const table = getByRole("table")
    const rows = within(table).getAllByRole("row").map(textOf)
    expect(rows).toEqual(["Member Before: none After", "Street none 1 Harbour Road", "City none Oslo"])
  })

  it("names collection entries added, modified and removed, the removed one from an older row", () => {
    const { container } = render(<TimelineRow entry={newest} fields={fields} entries={entries} />)
    const lines = [...container.querySelectorAll(".collection-change > li")].map(textOf)
    expect(lines).toEqual(["added Product Stand Price 80.00", "modified Kiosk Quantity 2 → 3", "removed Installation"])
  })

  it("shows a created row's snapshot in field order, collections entry by entry", () => {
    const { container, getByRole } = render(<TimelineRow entry={oldest} fields={fields} entries={entries} />)
    getByRole("article", { name: "Created by Ada Lovelace" })
    expect(textOf(container.querySelector(".cause") ?? container)).toBe("direct edit")
    const names = [...container.querySelectorAll(".snapshot > .change > dt")].map(textOf)
    expect(names).toEqual(["Title", "Amount", "Won", "Line items"])
    const items = [...container.querySelectorAll(".snapshot .entries > li")].map(textOf)
    expect(items).toEqual(["Product Kiosk Quantity 2 Price 450.00", "Product Installation Quantity 1 Price 300.00"])
  })

  it("shows a datetime in local time and passes raw rows of an unknown business object through", () => {
    const raw: AuditEntry = {
      ...updated,
      businessObject: "old/thing",
      changes: { signedAt: { from: null, to: "2026-03-01T09:30:00Z" } }
    }
    const [hydrated] = hydrateTimeline([{ name: "crm/deal", fields }], [{ ...raw, businessObject: "crm/deal" }])
    if (hydrated === undefined) throw new Error("no row")
    const { container, rerender } = render(<TimelineRow entry={hydrated} fields={fields} entries={entries} />)
    expect(container.querySelector(".to time")?.getAttribute("dateTime")).toBe("2026-03-01T09:30:00.000Z")
    rerender(<TimelineRow entry={raw} fields={{}} entries={new Map()} />)
    expect(textOf(container.querySelector(".to") ?? container)).toBe("2026-03-01T09:30:00Z")
  })
})
