import { describe, expect, it } from "@effect/vitest"
import { Decimal, hydrateTimeline, HydrationError, PlainDate } from "../../../src/client"
import type { HydratedCollectionChanges, HydratedObject, HydratedValueChange } from "../../../src/client"
import { field } from "../../../src/api/Field"
import { deal, dealFields, row, withField } from "./fixtures"

/**
 * One test per row of the spec's "Timeline hydration rules (client side)"
 * table, after the rule above it (decimals and dates hydrate, in `record` and
 * in `changes`, both sides, inside structs and collection entries).
 */

const created = row({
  record: {
    title: "Kiosk",
    quantity: 3,
    signed: true,
    amount: "1200.00",
    closeDate: "2026-03-01",
    closedAt: "2026-03-01T09:30:00.250Z",
    address: { street: "1 Main St", since: "2020-01-31", rent: "900.50" },
    lineItems: [
      {
        id: "l1",
        product: "Screen",
        price: "99.90",
        delivery: "2026-04-01",
        size: { weight: "2.5" },
        parts: [{ id: "p1", name: "cable", cost: "0.99" }]
      }
    ]
  }
})

const updated = row({
  changes: {
    amount: { from: "1200.00", to: "1350.00" },
    closeDate: { from: null, to: "2026-04-30" },
    address: {
      from: { street: "1 Main St", since: "2020-01-31" },
      to: { street: "2 High St", since: "2024-06-01", rent: "1000" }
    },
    lineItems: {
      added: [
        { id: "l2", values: { product: "Stand", price: "20.00", delivery: "2026-05-02", size: { weight: "7" } } }
      ],
      modified: [
        {
          id: "l1",
          changes: {
            price: { from: "99.90", to: "89.90" },
            parts: {
              modified: [{ id: "p1", changes: { cost: { from: "0.99", to: "1.29" } } }],
              removed: [{ id: "p9" }]
            }
          }
        }
      ],
      removed: [{ id: "l0" }]
    }
  }
})

const d = Decimal.parse
const day = PlainDate.parse

describe("timeline hydration: decimals and dates, in record and in changes", () => {
  it("a created row's record: decimal strings become Decimal, dates PlainDate, datetimes Date, inside structs and entries; the rest is kept", () => {
    const [entry] = hydrateTimeline([deal], [created])
    expect(entry?.record).toEqual({
      title: "Kiosk",
      quantity: 3,
      signed: true,
      amount: d("1200.00"),
      closeDate: day("2026-03-01"),
      closedAt: new Date("2026-03-01T09:30:00.250Z"),
      address: { street: "1 Main St", since: day("2020-01-31"), rent: d("900.50") },
      lineItems: [
        {
          id: "l1",
          product: "Screen",
          price: d("99.90"),
          delivery: day("2026-04-01"),
          size: { weight: d("2.5") },
          parts: [{ id: "p1", name: "cable", cost: d("0.99") }]
        }
      ]
    })
    expect(entry?.record?.amount).toBeInstanceOf(Decimal)
    expect(entry?.changes).toBeUndefined()
    const { record: _r, ...rest } = entry ?? {}
    const { record: _w, ...wire } = created
    expect(rest).toEqual({ ...wire })
    expect(entry?.at).toBe("2026-03-01T09:30:00.123456Z")
  })

  it("an updated row's changes: both sides of every from/to, struct values whole, added values, nested modified changes; removed stays {id}", () => {
    const [entry] = hydrateTimeline([deal], [updated])
    expect(entry?.record).toBeUndefined()
    expect(entry?.changes).toEqual({
      amount: { from: d("1200.00"), to: d("1350.00") },
      closeDate: { from: null, to: day("2026-04-30") },
      address: {
        from: { street: "1 Main St", since: day("2020-01-31") },
        to: { street: "2 High St", since: day("2024-06-01"), rent: d("1000") }
      },
      lineItems: {
        added: [
          {
            id: "l2",
            values: { product: "Stand", price: d("20.00"), delivery: day("2026-05-02"), size: { weight: d("7") } }
          }
        ],
        modified: [
          {
            id: "l1",
            changes: {
              price: { from: d("99.90"), to: d("89.90") },
              parts: {
                modified: [{ id: "p1", changes: { cost: { from: d("0.99"), to: d("1.29") } } }],
                removed: [{ id: "p9" }]
              }
            }
          }
        ],
        removed: [{ id: "l0" }]
      }
    })
    const lineItems = entry?.changes?.lineItems as HydratedCollectionChanges
    expect(lineItems.added?.[0]?.values.price).toBeInstanceOf(Decimal)
    const price = lineItems.modified?.[0]?.changes.price as HydratedValueChange | undefined
    expect(price?.to).toBeInstanceOf(Decimal)
  })

  it("archived and restored rows carry neither record nor changes, and stay so", () => {
    const rows = [row({ operation: "archived" }), row({ operation: "restored" })]
    const hydrated = hydrateTimeline([deal], rows)
    for (const entry of hydrated) {
      expect("record" in entry).toBe(false)
      expect("changes" in entry).toBe(false)
    }
  })

  it("a string field holding decimal- or date-like text stays a string", () => {
    const [entry] = hydrateTimeline([deal], [row({ record: { title: "2026-03-01", address: { street: "12.50" } } })])
    expect(entry?.record).toEqual({ title: "2026-03-01", address: { street: "12.50" } })
  })
})

describe("hydration table, row 1: business object renamed or removed", () => {
  it("its entries pass through raw; one unknown business object does not fail the whole timeline", () => {
    const legacy = row({
      businessObject: "old/deal",
      record: { amount: "5.00", closeDate: "2020-01-01", lineItems: { not: "a list" } }
    })
    const legacyUpdate = row({ businessObject: "old/deal", changes: { amount: { from: 1, to: "x" } } })
    const hydrated = hydrateTimeline([deal], [legacy, created, legacyUpdate])
    expect(hydrated[0]).toBe(legacy)
    expect(hydrated[2]).toBe(legacyUpdate)
    expect(hydrated[0]?.record?.amount).toBe("5.00")
    expect(hydrated[1]?.record?.amount).toEqual(d("1200.00"))
  })

  it("with no definitions at all (nothing readable), every entry passes through raw", () => {
    expect(hydrateTimeline([], [created, updated])).toEqual([created, updated])
  })
})

describe("hydration table, row 2: field renamed or removed", () => {
  it("in record: that field passes through untouched, all others hydrate (top level, struct member, entry member)", () => {
    const renamed = {
      ...withField(dealFields, "amount", undefined),
      value: field.decimal,
      address: field.struct({ street: field.string, rent: field.decimal }),
      lineItems: field.collection({ product: field.string, delivery: field.date })
    }
    const [entry] = hydrateTimeline([{ name: "crm/deal", fields: renamed }], [created])
    const record = entry?.record as HydratedObject
    expect(record.amount).toBe("1200.00")
    expect(record.closeDate).toEqual(day("2026-03-01"))
    expect(record.address).toEqual({ street: "1 Main St", since: "2020-01-31", rent: d("900.50") })
    expect(record.lineItems).toEqual([
      {
        id: "l1",
        product: "Screen",
        price: "99.90",
        delivery: day("2026-04-01"),
        size: { weight: "2.5" },
        parts: [{ id: "p1", name: "cable", cost: "0.99" }]
      }
    ])
  })

  it("in changes: that field's change passes through untouched (a collection change too), all others hydrate", () => {
    const removed = withField(withField(dealFields, "amount", undefined), "lineItems", undefined)
    const [entry] = hydrateTimeline([{ name: "crm/deal", fields: removed }], [updated])
    const wire = updated.changes ?? {}
    expect(entry?.changes?.amount).toBe(wire.amount)
    expect(entry?.changes?.lineItems).toBe(wire.lineItems)
    expect(entry?.changes?.closeDate).toEqual({ from: null, to: day("2026-04-30") })
  })

  it("inside a modified collection entry: a removed member's change passes through, the others hydrate", () => {
    const fields = { ...dealFields, lineItems: field.collection({ parts: field.collection({ cost: field.decimal }) }) }
    const [entry] = hydrateTimeline([{ name: "crm/deal", fields }], [updated])
    const lineItems = entry?.changes?.lineItems as HydratedCollectionChanges
    expect(lineItems.added?.[0]?.values).toEqual({
      product: "Stand",
      price: "20.00",
      delivery: "2026-05-02",
      size: { weight: "7" }
    })
    expect(lineItems.modified?.[0]?.changes).toEqual({
      price: { from: "99.90", to: "89.90" },
      parts: {
        modified: [{ id: "p1", changes: { cost: { from: d("0.99"), to: d("1.29") } } }],
        removed: [{ id: "p9" }]
      }
    })
  })
})

describe("hydration table, row 3: field's kind changed", () => {
  const hydrateWith =
    (name: string, kind: Parameters<typeof withField>[2], entry = created) =>
    () =>
      hydrateTimeline([{ name: "crm/deal", fields: withField(dealFields, name, kind) }], [entry])

  const expectError = (run: () => unknown, expected: Partial<HydrationError>) => {
    let error: unknown
    try {
      run()
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(HydrationError)
    expect(error).toMatchObject({ _tag: "HydrationError", businessObject: "crm/deal", ...expected })
    return error as HydrationError
  }

  it("a struct field that is a collection now throws, naming business object, field and both kinds", () => {
    const error = expectError(hydrateWith("address", field.collection({ street: field.string })), {
      fieldPath: "address",
      expectedKind: "collection",
      found: "object"
    })
    expect(error.message).toBe(
      'crm/deal: address is a collection field now, but the row holds an object ({"street":"1 Main St","since":"2020-01-31","rent":"900.50"}): its kind changed since the row was written'
    )
  })

  it("a number field that is a date now throws", () => {
    expectError(hydrateWith("quantity", field.date), {
      fieldPath: "quantity",
      expectedKind: "date",
      found: "number",
      value: 3
    })
  })

  it("a decimal field that is a number now throws (a decimal is a string on the wire)", () => {
    expectError(hydrateWith("amount", field.number), {
      fieldPath: "amount",
      expectedKind: "number",
      found: "string",
      value: "1200.00"
    })
  })

  it("a string field that is a decimal now throws when the text is not a decimal", () => {
    expectError(hydrateWith("title", field.decimal), { fieldPath: "title", expectedKind: "decimal", found: "string" })
  })

  it("inside a struct, inside a collection entry (named by its id), in both sides of a change, in an added entry", () => {
    const nested = (fields: Parameters<typeof field.collection>[0]) => () =>
      hydrateTimeline([{ name: "crm/deal", fields: { ...dealFields, lineItems: field.collection(fields) } }], [created])
    expectError(nested({ size: field.struct({ weight: field.boolean }) }), {
      fieldPath: "lineItems[l1].size.weight",
      expectedKind: "boolean"
    })
    expectError(nested({ parts: field.collection({ cost: field.date }) }), {
      fieldPath: "lineItems[l1].parts[p1].cost",
      expectedKind: "date"
    })
    expectError(hydrateWith("address", field.struct({ since: field.number }), updated), {
      fieldPath: "address.since",
      expectedKind: "number"
    })
    const addedEntry = () =>
      hydrateTimeline(
        [{ name: "crm/deal", fields: { ...dealFields, lineItems: field.collection({ delivery: field.boolean }) } }],
        [updated]
      )
    expectError(addedEntry, { fieldPath: "lineItems[l2].delivery", expectedKind: "boolean", found: "string" })
  })

  it("a collection that is a struct now: its collection changes do not fit and throw", () => {
    expectError(hydrateWith("lineItems", field.struct({ product: field.string }), updated), {
      fieldPath: "lineItems",
      expectedKind: "struct",
      found: "collection changes"
    })
  })

  it("null (no value) fits every kind: a cleared field never throws", () => {
    const cleared = row({ changes: { amount: { from: null, to: null } } })
    expect(() =>
      hydrateTimeline([{ name: "crm/deal", fields: withField(dealFields, "amount", field.collection({})) }], [cleared])
    ).not.toThrow()
  })
})

describe("choice and link fields hydrate as the strings they are", () => {
  const kinds = {
    stage: field.choice(["lead", "won"]),
    company: field.link("crm/company"),
    lineItems: field.collection({ supplier: field.link("crm/company") })
  }
  const company = "0190a3b4-0000-7000-8000-000000000a0e"

  it("an option dropped since and a link to a record deleted since read as written, in record and in changes", () => {
    const rows = [
      row({
        changes: {
          stage: { from: "lead", to: "closed" },
          company: { from: null, to: company },
          lineItems: { added: [{ id: "l1", values: { supplier: company } }] }
        }
      }),
      row({ record: { stage: "closed", company, lineItems: [{ id: "l1", supplier: company }] } })
    ]
    const [changed, born] = hydrateTimeline([{ name: "crm/deal", fields: kinds }], rows)
    expect(changed?.changes).toEqual(rows[0]?.changes)
    expect(born?.record).toEqual(rows[1]?.record)
  })

  it("a value that is no string does not fit: the field's kind changed since", () => {
    expect(() => hydrateTimeline([{ name: "crm/deal", fields: kinds }], [row({ record: { stage: 3 } })])).toThrow(
      HydrationError
    )
  })
})
