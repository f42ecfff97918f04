import { describe, expect, it } from "@effect/vitest"
import { Decimal, hydrateTimeline, isErased, toWireChanges, toWireObject } from "../../../src/client"
import type { HydratedCollectionChanges, HydratedObject, HydratedValueChange } from "../../../src/client"
import { deal, row } from "./fixtures"

/**
 * An erased value (docs/ledger.md, "Erasure") travels as `{$erased: <its
 * commitment>}` wherever it stood, whatever the field's kind: hydration
 * passes it through as it is, never reads it as the field's kind (nor
 * throws), and hydrates everything around it.
 */

const marker = { $erased: "a".repeat(64) }

describe("hydration of erased values", () => {
  it("a marker in a snapshot stays the marker, at the top, in a struct and in a collection entry", () => {
    const [created] = hydrateTimeline(
      [deal],
      [
        row({
          record: {
            title: marker,
            amount: marker,
            closeDate: marker,
            quantity: 2,
            price: "1.00",
            address: { street: marker, rent: "900.50" },
            lineItems: [{ id: "l1", product: marker, price: "99.90" }]
          }
        })
      ]
    )
    const record: HydratedObject = created?.record ?? {}
    expect(record.title).toEqual(marker)
    expect(record.amount).toEqual(marker)
    expect(record.closeDate).toEqual(marker)
    expect(isErased(record.amount)).toBe(true)
    expect(record.address).toEqual({ street: marker, rent: Decimal.parse("900.50") })
    expect(record.lineItems).toEqual([{ id: "l1", product: marker, price: Decimal.parse("99.90") }])
    expect(toWireObject(record).amount).toEqual(marker)
  })

  it("a marker on either side of a change, in an added entry and in a modified entry's changes", () => {
    const changes = {
      amount: { from: marker, to: null },
      closeDate: { from: "2026-03-01", to: marker },
      lineItems: {
        added: [{ id: "l2", values: { price: marker, delivery: "2026-04-01" } }],
        modified: [{ id: "l1", changes: { price: { from: marker, to: "2.00" } } }]
      }
    }
    const [updated] = hydrateTimeline([deal], [row({ changes })])
    const amount = updated?.changes?.amount as HydratedValueChange
    expect(amount).toEqual({ from: marker, to: null })
    expect(updated?.changes?.closeDate).toEqual({ from: expect.anything(), to: marker })
    const lines = updated?.changes?.lineItems as HydratedCollectionChanges
    expect(lines.added?.[0]?.values.price).toEqual(marker)
    expect(lines.modified?.[0]?.changes.price).toEqual({ from: marker, to: Decimal.parse("2.00") })
    expect(toWireChanges(updated?.changes ?? {})).toEqual(changes)
  })
})
