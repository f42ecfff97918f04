import { describe, expect, it } from "@effect/vitest"
import { Arbitrary } from "effect"
import { parseJson } from "../../src/json/parseJson"
import { constantFrom, integer, jsonValue } from "../support/arbitraries"

/**
 * `parseJson` (src/json/parseJson.ts): the value `JSON.parse` gives, with
 * every key as the text says even after another text left the engine a key
 * that it would read in its place (nodejs/node#63785, V8 12.8 and later).
 */

/** A key of one to three characters, escapes and backslashes likely. */
const shortKey = Arbitrary.map(
  Arbitrary.array(constantFrom("a", "\\", "\n", '"', "A", "\u0000", "é", "\t"), { minLength: 1, maxLength: 3 }),
  (characters) => characters.join("")
)

/**
 * What a text must leave behind for `victim` to be read wrong: a key as long
 * as `victim` holding the first characters of its JSON spelling (where the
 * escape's backslash stands), at the same place in an object of the same shape.
 */
const poisonFor = (victim: string): string => JSON.stringify(victim).slice(1, 1 + victim.length)

let shapes = 0

const keysOf = (value: unknown): Array<string> =>
  value !== null && typeof value === "object" ? Object.keys(value) : []

describe("parseJson", () => {
  it.prop(
    "reads an escaped key as written after a text with the key V8 would read instead",
    [shortKey, integer(0, 2)],
    ([victim, depth]) => {
      // A member name never seen before, so the key after it is the one transition the engine knows there.
      const fresh = `shape${shapes++}`
      const nest = (key: string): unknown => {
        let value: unknown = { [fresh]: 0, [key]: 1 }
        for (let level = 0; level < depth; level++) value = { items: [value] }
        return value
      }
      parseJson(JSON.stringify(nest(poisonFor(victim))))
      const text = JSON.stringify(nest(victim))
      expect(JSON.stringify(parseJson(text))).toBe(text)
    },
    { arbitrary: { runs: 2_000 } }
  )

  it.prop(
    "gives what JSON.parse gives, key order included, for any JSON value",
    [jsonValue],
    ([value]) => {
      const text = JSON.stringify(value)
      expect(parseJson(text)).toStrictEqual(JSON.parse(text))
      expect(JSON.stringify(parseJson(text))).toBe(text)
    },
    { arbitrary: { runs: 500 } }
  )

  it("keeps JSON.parse's reading of keys with backslashes: __proto__, duplicates, integer-like keys, nesting", () => {
    const text =
      ' { "b\\\\" : 1, "__proto__": {"x": [1, {"\\"": null}]}, "2": "two", "1": [], "b\\\\": 2, "\\u0041": {} } '
    const read = parseJson(text)
    expect(read).toStrictEqual(JSON.parse(text))
    expect(keysOf(read)).toEqual(["1", "2", "b\\", "__proto__", "A"])
    expect(Object.getPrototypeOf(read)).toBe(Object.prototype)
    expect(Reflect.get(Object(read), "b\\")).toBe(2)
    expect(parseJson('"\\\\"')).toBe("\\")
    expect(parseJson('[{"\\\\":[{"\\n":-1.5e3}]}]')).toStrictEqual([{ "\\": [{ "\n": -1500 }] }])
  })

  it("refuses what JSON.parse refuses", () => {
    for (const text of ['{"\\\\":}', '{"a\\\\" 1}', "", "[1,]", '{"\\x":1}']) {
      expect(() => parseJson(text)).toThrow(SyntaxError)
    }
  })
})
