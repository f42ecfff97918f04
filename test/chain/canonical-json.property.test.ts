import { SqlClient } from "effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { Arbitrary, Effect } from "effect"
import { canonicalJson } from "../../src/chain/canonicalJson"
import { flawOf } from "../../src/http/JsonBody"
import { integer, jsonValue } from "../support/arbitraries"
import { reordered } from "./reordered"
import { TestServices } from "../support/TestApp"
import { parseJson } from "../../src/json/parseJson"

/**
 * Canonical JSON (docs/ledger.md, "Formats"): one text per JSON value,
 * whatever order its keys were built or stored in, and the same text again
 * after the value went through JSON text or PostgreSQL's jsonb (which keeps
 * keys in an order of its own and numbers as numeric).
 */

/** Whether PostgreSQL can hold every string and key of the value (the service refuses the rest, src/http/JsonBody.ts). */
const storable = (value: unknown): boolean => {
  if (typeof value === "string") return flawOf(value) === undefined
  if (value === null || typeof value !== "object") return true
  return Object.entries(value).every(([key, member]) => flawOf(key) === undefined && storable(member))
}

describe("canonicalJson", () => {
  it.prop(
    "does not depend on the order of the keys",
    [jsonValue, integer(0, 1_000)],
    ([value, shift]) => {
      expect(canonicalJson(reordered(value, shift))).toBe(canonicalJson(value))
    },
    { arbitrary: { runs: 500 } }
  )

  it.prop(
    "is JSON that parses back to a value with the same canonical text",
    [jsonValue],
    ([value]) => {
      const text = canonicalJson(value)
      expect(canonicalJson(parseJson(text))).toBe(text)
    },
    { arbitrary: { runs: 500 } }
  )

  it("sorts keys by UTF-16 code units, not by code points or locale", () => {
    // U+FF5E sorts after U+1F600 by code point, before it by UTF-16 code units (a surrogate pair starts with D83D).
    expect(canonicalJson({ "😀": 1, "～": 2, B: 3, a: 4, "10": 5, "9": 6 })).toBe(
      '{"10":5,"9":6,"B":3,"a":4,"😀":1,"～":2}'
    )
    expect(canonicalJson({ b: [1.5, -0, 1e21, 1e-7, "x\u2028"], a: { d: null, c: true } })).toBe(
      '{"a":{"c":true,"d":null},"b":[1.5,0,1e+21,1e-7,"x\u2028"]}'
    )
  })
})

layer(TestServices, { excludeTestServices: true })("canonicalJson and PostgreSQL's jsonb", (it) => {
  it.effect("a sample of values stored as jsonb reads back with the same canonical text", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const sample = (yield* Arbitrary.sampleEffect(jsonValue, { count: 300, seed: 28 })).filter(storable)
      expect(sample.length).toBeGreaterThan(200)
      // One statement: every value through jsonb and back as text, in order.
      const rows = yield* sql<{ readonly back: string }>`
        SELECT v.value::text AS back FROM jsonb_array_elements(${JSON.stringify(sample.map((value) => reordered(value, 1)))}::jsonb)
          WITH ORDINALITY AS v(value, n) ORDER BY v.n`
      expect(rows.map((row) => canonicalJson(parseJson(row.back)))).toEqual(sample.map(canonicalJson))
    })
  )
})
