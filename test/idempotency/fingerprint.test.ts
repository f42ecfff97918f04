import { describe, expect, it } from "@effect/vitest"
import { canonicalJson, payloadHash } from "../../src/idempotency/fingerprint"

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
})
