// @vitest-environment jsdom
import { cleanup, render, within } from "@testing-library/react"
import { afterEach, describe, expect, it } from "vitest"
import type { AuditEntry, Fields } from "../../src/client"
import { hydrateTimeline } from "../../src/client"
import { ActivityRow } from "../../web/src/activity/ActivityRow"
import { SnapshotView } from "../../web/src/timeline/SnapshotView"
import { indexEntries } from "../../web/src/timeline/entryIndex"
import { TimelineRow } from "../../web/src/timeline/TimelineRow"

/**
 * How the page shows erased values (docs/ledger.md, "Erasure"): "erased"
 * wherever a marker stands (a snapshot, either side of a change, a struct's
 * member, a collection entry's member, the record as it was), and the
 * `erased` row as "Erased <fields>", on the timeline and in the activity feed.
 */

const fields: Fields = {
  title: { kind: "string" },
  website: { kind: "string" },
  amount: { kind: "decimal" },
  address: { kind: "struct", fields: { street: { kind: "string" }, city: { kind: "string" } } },
  lineItems: { kind: "collection", fields: { product: { kind: "string" }, quantity: { kind: "number" } } }
}

const marker = { $erased: "ab".repeat(32) }
const actor = { kind: "user", id: "u-1", name: "Ada Lovelace", email: "ada@example.com" } as const
const cause = { kind: "action", action: "crm/deal/erase", erase: { fields: ["website", "address.street"] } } as const
const base = {
  at: "2026-03-01T09:30:00.123456Z",
  correlationId: "c-1",
  businessObject: "crm/deal",
  businessObjectId: "d-1",
  actor
}

const created: AuditEntry = {
  ...base,
  id: "row-1",
  operation: "created",
  cause: null,
  record: {
    title: "Kiosk",
    website: marker,
    amount: marker,
    address: { street: marker, city: "Oslo" },
    lineItems: [{ id: "li-1", product: marker, quantity: 2 }]
  }
}

const updated: AuditEntry = {
  ...base,
  id: "row-2",
  operation: "updated",
  cause,
  changes: {
    website: { from: marker, to: null },
    address: { from: { street: marker, city: "Oslo" }, to: { city: "Oslo" } }
  }
}

const erased: AuditEntry = { ...base, id: "row-3", operation: "erased", cause }

const hydrated = hydrateTimeline([{ name: "crm/deal", fields }], [erased, updated, created])
const entries = indexEntries(fields, hydrated, undefined)
const [erasedRow, updatedRow, createdRow] = hydrated
if (erasedRow === undefined || updatedRow === undefined || createdRow === undefined) throw new Error("no rows")

afterEach(cleanup)

const textOf = (element: Element) => {
  const copy = element.cloneNode(true)
  if (!(copy instanceof Element)) return ""
  for (const cell of copy.querySelectorAll("dt, dd, th, td")) cell.append(" ")
  return (copy.textContent ?? "").replace(/\s+/g, " ").trim()
}

describe("erased values on the page", () => {
  it("a snapshot shows each erased value as erased, in a struct and in a collection entry too", () => {
    const { container } = render(<TimelineRow entry={createdRow} fields={fields} entries={entries} />)
    const values = [...container.querySelectorAll(".snapshot > .change")].map(textOf)
    expect(values).toEqual([
      "Title Kiosk",
      "Website erased",
      "Amount erased",
      "Address Street erased City Oslo",
      "Line items Product erased Quantity 2"
    ])
    expect(container.querySelectorAll(".erased")).toHaveLength(4)
  })

  it("a change shows an erased side as erased, a struct's erased member in its table", () => {
    const { container, getByRole } = render(<TimelineRow entry={updatedRow} fields={fields} entries={entries} />)
    const website = container.querySelector(".changes > .change:nth-child(1) > dd")
    expect(website && textOf(website)).toBe("erased → none")
    const rows = within(getByRole("table")).getAllByRole("row").map(textOf)
    expect(rows).toEqual(["Member Before After", "Street erased none", "City Oslo Oslo"])
    expect(textOf(container.querySelector(".cause") ?? container)).toBe("erasure of website, address street")
  })

  it("the erased row reads as 'Erased <fields>', on the timeline and in the activity feed", () => {
    const { getByRole, container } = render(<TimelineRow entry={erasedRow} fields={fields} entries={entries} />)
    getByRole("article", { name: "Erased website, address street by Ada Lovelace" })
    expect(container.querySelector(".changes, .snapshot")).toBeNull()
    cleanup()
    const feed = render(
      <ul>
        <ActivityRow entry={{ ...erased, titles: { "d-1": { title: "Kiosk", deleted: false } } }} />
      </ul>
    )
    expect(textOf(feed.container.querySelector(".what") ?? feed.container)).toBe(
      "Erased website, address street of deal Kiosk"
    )
    cleanup()
    const whole = render(
      <TimelineRow
        entry={{ ...erasedRow, cause: { ...cause, erase: { fields: [] } } }}
        fields={fields}
        entries={entries}
      />
    )
    whole.getByRole("article", { name: "Erased every value by Ada Lovelace" })
  })

  it("the record as it was shows erased values as erased", () => {
    const { container } = render(<SnapshotView record={{ title: "Kiosk", website: marker }} fields={fields} />)
    expect([...container.querySelectorAll(".change")].map(textOf)).toEqual(["Title Kiosk", "Website erased"])
  })
})
