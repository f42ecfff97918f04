import { describe, expect, it } from "vitest"
import { Decimal, PlainDate } from "../../src/client"
import { pendingChanges, withoutSaved } from "../../web/src/form/edits"
import { newEntryId } from "../../web/src/form/entryId"
import type { JsonObject } from "../../src/api/Json"
import { sameValue, toWire, toWireObject } from "../../web/src/form/values"

/** The form's edits over the record as fetched: what a save sends, and what "unsaved" means. */

const record = {
  title: "Kiosk",
  amount: "1200.00",
  address: { city: "Oslo" },
  lineItems: [{ id: "a", product: "Kiosk", quantity: 2 }]
}

describe("pendingChanges", () => {
  it("sends only the fields whose edit differs from the record", () => {
    expect(pendingChanges(record, { title: "Kiosk", amount: "1350.00" })).toEqual({ amount: "1350.00" })
    expect(pendingChanges(record, {})).toEqual({})
  })

  it("an emptied box clears the field (null); emptying an absent field is no change", () => {
    expect(pendingChanges(record, { title: null })).toEqual({ title: null })
    expect(pendingChanges(record, { stage: null })).toEqual({})
  })

  it("fields named after Object.prototype's members are fields like any other", () => {
    for (const name of ["constructor", "toString", "valueOf", "hasOwnProperty"]) {
      expect(pendingChanges(record, { [name]: null }), name).toEqual({})
      expect(pendingChanges(record, { [name]: "x" }), name).toEqual({ [name]: "x" })
      expect(pendingChanges({ [name]: "x" }, { [name]: "x" }), name).toEqual({})
      // Saved as typed: the edit is done; not saved: it stays.
      expect(withoutSaved({ [name]: "x" }, { [name]: "x" }), name).toEqual({})
      expect(withoutSaved({ [name]: null }, {}), name).toEqual({ [name]: null })
    }
  })

  it("a struct whose members are all emptied is no value, as the service stores it", () => {
    expect(pendingChanges(record, { address: { city: null, street: null } })).toEqual({ address: null })
    expect(pendingChanges({}, { address: { city: null } })).toEqual({})
    expect(pendingChanges(record, { address: { street: null, city: "Oslo" } })).toEqual({})
    expect(pendingChanges(record, { address: { city: "Bergen", street: null } })).toEqual({
      address: { city: "Bergen" }
    })
  })

  it("a collection is sent whole once any entry changed, entries keeping their ids", () => {
    const lineItems: ReadonlyArray<JsonObject> = [
      { id: "a", product: "Kiosk", quantity: 3 },
      { id: "b", product: null }
    ]
    expect(pendingChanges(record, { lineItems })).toEqual({
      lineItems: [{ id: "a", product: "Kiosk", quantity: 3 }, { id: "b" }]
    })
    expect(pendingChanges(record, { lineItems: [{ quantity: 2, product: "Kiosk", id: "a" }] })).toEqual({})
  })
})

describe("withoutSaved", () => {
  it("drops what was saved and keeps what was typed since", () => {
    const saved = { amount: "1350.00", title: "Stand" }
    expect(withoutSaved({ amount: "1350.00", title: "Stand 2", stage: "won" }, saved)).toEqual({
      title: "Stand 2",
      stage: "won"
    })
  })
})

describe("wire form", () => {
  it("hydrated values go back as their wire form", () => {
    expect(toWire(Decimal.parse("1250.00"))).toBe("1250.00")
    expect(toWire(PlainDate.parse("2026-03-01"))).toBe("2026-03-01")
    expect(toWire(new Date("2026-03-01T09:30:00Z"))).toBe("2026-03-01T09:30:00.000Z")
    expect(toWireObject({ lines: [{ id: "a", price: Decimal.parse("1.50") }], missing: undefined })).toEqual({
      lines: [{ id: "a", price: "1.50" }],
      missing: null
    })
    expect(toWire(Number.NaN)).toBeNull()
  })

  it("equality ignores key order and absent members", () => {
    expect(sameValue({ a: 1, b: { c: "x", d: null } }, { b: { c: "x" }, a: 1 })).toBe(true)
    expect(sameValue([{ id: "a" }], [{ id: "b" }])).toBe(false)
    expect(sameValue(null, undefined)).toBe(true)
    expect(sameValue("1.5", "1.50")).toBe(false)
  })
})

describe("new collection entries", () => {
  it("get distinct URL-safe ids", () => {
    const ids = new Set(Array.from({ length: 100 }, newEntryId))
    expect(ids.size).toBe(100)
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{24}$/)
  })
})
