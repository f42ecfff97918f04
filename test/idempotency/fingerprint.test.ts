import { createHash } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { BulkWrite } from "../../src/api/BulkWrite"
import { canonicalJson, payloadHash } from "../../src/idempotency/fingerprint"
import { jsonValue } from "../support/arbitraries"

const hashOfText = (value: unknown) =>
  createHash("sha256")
    .update(canonicalJson(value ?? null))
    .digest("hex")

describe("the fingerprint of a request's decoded payload", () => {
  it("sorts object keys at every depth and keeps array order", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { y: 1, x: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[3,{"x":2,"y":1}]},"b":1}'
    )
    expect(payloadHash({ values: { title: "Kiosk", amount: "1.00" }, draft: false })).toBe(
      payloadHash({ draft: false, values: { amount: "1.00", title: "Kiosk" } })
    )
  })

  it("tells apart what differs in value, in array order, or in absence", () => {
    const base = payloadHash({ values: { lineItems: [{ id: "a" }, { id: "b" }] } })
    expect(payloadHash({ values: { lineItems: [{ id: "b" }, { id: "a" }] } })).not.toBe(base)
    expect(payloadHash({ values: { lineItems: [{ id: "a" }] } })).not.toBe(base)
    expect(payloadHash({ values: { title: null } })).not.toBe(payloadHash({ values: {} }))
    expect(payloadHash(undefined)).toBe(payloadHash(null))
    expect(payloadHash(undefined)).toMatch(/^[0-9a-f]{64}$/)
  })

  it.prop(
    "is the hash of the canonical text, though hashed a member and an element at a time",
    [jsonValue],
    ([value]) => {
      expect(payloadHash(value)).toBe(hashOfText(value))
      expect(payloadHash({ items: [value, { create: value }], other: value })).toBe(
        hashOfText({ items: [value, { create: value }], other: value })
      )
    },
    { arbitrary: { runs: 300 } }
  )

  it("a bulk request, a class instance with members left out and arrays with holes: the hash of the canonical text", () => {
    const bulk = new BulkWrite({
      items: [{ create: { title: "A", lineItems: [{ product: "Kiosk" }] } }, { update: { id: "x", values: {} } }]
    })
    expect(payloadHash(bulk)).toBe(hashOfText(bulk))
    const odd = { b: undefined, a: [undefined, () => 1, new Date(0), null], c: { toJSON: () => "c" } }
    expect(payloadHash(odd)).toBe(hashOfText(odd))
  })
})
