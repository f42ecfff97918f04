import { describe, expect, it } from "@effect/vitest"
import { applyChanges, diffValues } from "../../src/diff"
import { crm } from "../../src/plugins/crm"
import { field } from "../../src/api/Field"
import type { Fields } from "../../src/api/Field"

const dealFields: Fields = crm.businessObjects.deal?.fields ?? {}

const address = { street: "1 Main St", city: "Lyon", country: "FR" }
const widget = { id: "li-1", product: "Widget", quantity: 2, price: "9.99" }
const gadget = { id: "li-2", product: "Gadget", quantity: 1, price: "120.00" }

const deal = {
  title: "Big deal",
  stage: "open",
  amount: "12.50",
  closeDate: "2025-03-31",
  company: "acme",
  address,
  lineItems: [widget, gadget]
}

describe("diffValues on crm/deal", () => {
  it("the crm/deal fields are the ones these tests assume", () => {
    expect(Object.keys(dealFields)).toEqual([
      "title",
      "stage",
      "amount",
      "closeDate",
      "company",
      "address",
      "lineItems"
    ])
  })

  it("a changed scalar is a ValueChange", () => {
    expect(diffValues(dealFields, deal, { ...deal, stage: "won" })).toEqual({ stage: { from: "open", to: "won" } })
  })

  it("decimals and dates keep their wire form in from/to", () => {
    const changes = diffValues(dealFields, deal, { ...deal, amount: "13.00", closeDate: "2025-04-01" })
    expect(changes).toEqual({
      amount: { from: "12.50", to: "13.00" },
      closeDate: { from: "2025-03-31", to: "2025-04-01" }
    })
  })

  it("a scalar appearing or clearing is null on the absent side; absent and null are the same", () => {
    const { company: _company, ...withoutCompany } = deal
    expect(diffValues(dealFields, withoutCompany, deal)).toEqual({ company: { from: null, to: "acme" } })
    expect(diffValues(dealFields, deal, { ...deal, company: null })).toEqual({ company: { from: "acme", to: null } })
    expect(diffValues(dealFields, withoutCompany, { ...deal, company: null })).toBeNull()
  })

  it("a struct appearing is one ValueChange from null to the whole object", () => {
    expect(diffValues(dealFields, { ...deal, address: null }, deal)).toEqual({ address: { from: null, to: address } })
  })

  it("a struct clearing is one ValueChange from the whole object to null", () => {
    const { address: _address, ...withoutAddress } = deal
    expect(diffValues(dealFields, deal, withoutAddress)).toEqual({ address: { from: address, to: null } })
  })

  it("a struct member edit holds the whole member object on each side", () => {
    const moved = { ...address, city: "Paris" }
    expect(diffValues(dealFields, deal, { ...deal, address: moved })).toEqual({ address: { from: address, to: moved } })
  })

  it("a struct compares structurally: key order and null members do not matter", () => {
    const reordered = { country: "FR", city: "Lyon", street: "1 Main St", zip: null }
    expect(diffValues(dealFields, deal, { ...deal, address: reordered })).toBeNull()
  })

  it("an added entry is { id, values } with the id left out of values", () => {
    const extra = { id: "li-3", product: "Gizmo", quantity: 5, price: "1.25" }
    expect(diffValues(dealFields, deal, { ...deal, lineItems: [widget, gadget, extra] })).toEqual({
      lineItems: { added: [{ id: "li-3", values: { product: "Gizmo", quantity: 5, price: "1.25" } }] }
    })
  })

  it("a modified entry is { id, changes } holding only the changed member", () => {
    expect(diffValues(dealFields, deal, { ...deal, lineItems: [{ ...widget, quantity: 3 }, gadget] })).toEqual({
      lineItems: { modified: [{ id: "li-1", changes: { quantity: { from: 2, to: 3 } } }] }
    })
  })

  it("a removed entry is { id } only", () => {
    expect(diffValues(dealFields, deal, { ...deal, lineItems: [gadget] })).toEqual({
      lineItems: { removed: [{ id: "li-1" }] }
    })
  })

  it("all three buckets together; buckets follow after (added, modified) and before (removed)", () => {
    const a = { id: "a", product: "A", quantity: 1, price: "1.00" }
    const b = { id: "b", product: "B", quantity: 1, price: "1.00" }
    const c = { id: "c", product: "C", quantity: 1, price: "1.00" }
    const d = { id: "d", product: "D", quantity: 1, price: "1.00" }
    const before = { lineItems: [a, b, c, d] }
    const after = {
      lineItems: [
        { id: "y", product: "Y" },
        { ...d, price: "2.00" },
        { id: "x", product: "X" },
        { ...b, quantity: 7 }
      ]
    }
    expect(diffValues(dealFields, before, after)).toEqual({
      lineItems: {
        added: [
          { id: "y", values: { product: "Y" } },
          { id: "x", values: { product: "X" } }
        ],
        modified: [
          { id: "d", changes: { price: { from: "1.00", to: "2.00" } } },
          { id: "b", changes: { quantity: { from: 1, to: 7 } } }
        ],
        removed: [{ id: "a" }, { id: "c" }]
      }
    })
  })

  it("a collection appearing or clearing is all added or all removed; absent, null and [] are the same", () => {
    expect(diffValues(dealFields, { ...deal, lineItems: null }, { ...deal, lineItems: [gadget] })).toEqual({
      lineItems: { added: [{ id: "li-2", values: { product: "Gadget", quantity: 1, price: "120.00" } }] }
    })
    expect(diffValues(dealFields, deal, { ...deal, lineItems: null })).toEqual({
      lineItems: { removed: [{ id: "li-1" }, { id: "li-2" }] }
    })
    expect(diffValues(dealFields, { ...deal, lineItems: [] }, { ...deal, lineItems: null })).toBeNull()
  })

  it("rule 1: empty buckets are omitted", () => {
    const changes = diffValues(dealFields, deal, { ...deal, lineItems: [gadget] })
    expect(changes?.lineItems).toEqual({ removed: [{ id: "li-1" }] })
    expect(changes?.lineItems).not.toHaveProperty("added")
    expect(changes?.lineItems).not.toHaveProperty("modified")
  })

  it("rule 1: entry order is not significant (diffed by id), so a reorder alone omits the collection", () => {
    expect(diffValues(dealFields, deal, { ...deal, lineItems: [gadget, widget] })).toBeNull()
    expect(diffValues(dealFields, deal, { ...deal, stage: "won", lineItems: [gadget, widget] })).toEqual({
      stage: { from: "open", to: "won" }
    })
  })

  it("rule 2: unchanged fields are omitted", () => {
    const changes = diffValues(dealFields, deal, {
      ...deal,
      title: "Bigger deal",
      lineItems: [widget, { ...gadget, price: "99.00" }]
    })
    expect(Object.keys(changes ?? {})).toEqual(["title", "lineItems"])
    expect(changes?.lineItems).toEqual({
      modified: [{ id: "li-2", changes: { price: { from: "120.00", to: "99.00" } } }]
    })
  })

  it("rule 3: an unchanged object yields null, never {}", () => {
    expect(diffValues(dealFields, deal, deal)).toBeNull()
    expect(diffValues(dealFields, deal, structuredClone(deal))).toBeNull()
    expect(diffValues(dealFields, {}, {})).toBeNull()
  })

  it("undeclared fields (schema drift) are compared as plain values, after the declared ones, sorted", () => {
    const changes = diffValues(
      dealFields,
      { ...deal, zeta: 1, legacy: [1, 2] },
      { ...deal, zeta: 2, legacy: [2, 1], stage: "won" }
    )
    expect(changes).toEqual({
      stage: { from: "open", to: "won" },
      legacy: { from: [1, 2], to: [2, 1] },
      zeta: { from: 1, to: 2 }
    })
    expect(Object.keys(changes ?? {})).toEqual(["stage", "legacy", "zeta"])
  })

  it("a collection value that is not a list of entries with unique ids is compared as a plain value", () => {
    const duplicated = [widget, { ...widget, quantity: 9 }]
    expect(diffValues(dealFields, deal, { ...deal, lineItems: duplicated })).toEqual({
      lineItems: { from: [widget, gadget], to: duplicated }
    })
  })
})

describe("diffValues on nested structures", () => {
  const fields: Fields = {
    rows: field.collection({
      label: field.string,
      size: field.struct({ width: field.number, height: field.number }),
      parts: field.collection({ name: field.string })
    })
  }

  it("a struct inside an entry is a whole ValueChange; a nested collection recurses", () => {
    const before = { rows: [{ id: "r", label: "x", size: { width: 1, height: 2 }, parts: [{ id: "p1", name: "a" }] }] }
    const after = {
      rows: [
        {
          id: "r",
          label: "x",
          size: { width: 1, height: 3 },
          parts: [
            { id: "p1", name: "b" },
            { id: "p2", name: "c" }
          ]
        }
      ]
    }
    expect(diffValues(fields, before, after)).toEqual({
      rows: {
        modified: [
          {
            id: "r",
            changes: {
              size: { from: { width: 1, height: 2 }, to: { width: 1, height: 3 } },
              parts: {
                added: [{ id: "p2", values: { name: "c" } }],
                modified: [{ id: "p1", changes: { name: { from: "a", to: "b" } } }]
              }
            }
          }
        ]
      }
    })
  })
})

describe("applyChanges", () => {
  it("rebuilds after from before and the diff", () => {
    const after = {
      ...deal,
      stage: "won",
      address: null,
      lineItems: [
        { ...gadget, quantity: 4 },
        { id: "li-9", product: "New" }
      ]
    }
    const { address: _address, ...expected } = after
    expect(applyChanges(dealFields, deal, diffValues(dealFields, deal, after))).toEqual(expected)
  })

  it("keeps entry positions for modified entries and appends added ones in order", () => {
    const before = { lineItems: [widget, gadget] }
    const result = applyChanges(dealFields, before, {
      lineItems: {
        added: [
          { id: "b", values: { product: "B" } },
          { id: "a", values: { product: "A" } }
        ],
        modified: [{ id: "li-1", changes: { quantity: { from: 2, to: 5 } } }]
      }
    })
    expect(result).toEqual({
      lineItems: [{ ...widget, quantity: 5 }, gadget, { id: "b", product: "B" }, { id: "a", product: "A" }]
    })
  })

  it("a `to: null` removes the field, and the result holds no null anywhere", () => {
    const result = applyChanges(
      dealFields,
      { ...deal, company: null, address: { ...address, country: null } },
      {
        title: { from: "Big deal", to: null }
      }
    )
    expect(result).not.toHaveProperty("title")
    expect(result).not.toHaveProperty("company")
    expect(result.address).toEqual({ street: "1 Main St", city: "Lyon" })
  })

  it("null changes leave the values as they were", () => {
    expect(applyChanges(dealFields, deal, null)).toEqual(deal)
  })
})
