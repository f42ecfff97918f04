import { describe, expect, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { engineMisreadsKeys } from "../../src/json/parseJson"
import { TestApp } from "../support/TestApp"

/**
 * `guardJsonParse` (src/json/parseJson.ts): in a process running the app,
 * `JSON.parse` itself reads keys as written, so what libraries parse (the
 * HTTP API's request bodies, the typed client's answers) does too.
 */

let shapes = 0

/** Whether `JSON.parse` reads `{"<new shape>":0,"<victim>":1}` right after the same shape with the key V8 would read instead. */
const readsRight = (victim: string): boolean => {
  const fresh = `guarded${shapes++}_${Date.now()}`
  const poison = JSON.stringify(victim).slice(1, 1 + victim.length)
  JSON.parse(JSON.stringify({ [fresh]: 0, [poison]: 1 }))
  return Object.keys(JSON.parse(JSON.stringify({ [fresh]: 0, [victim]: 1 })))[1] === victim
}

describe("the engine", () => {
  it("is probed without being changed", () => {
    const before = JSON.parse
    expect(typeof engineMisreadsKeys()).toBe("boolean")
    expect(JSON.parse).toBe(before)
  })
})

layer(TestApp)("JSON.parse in a process running the app", (it) => {
  it.effect("reads escaped keys as written, and still takes a reviver", () =>
    Effect.sync(() => {
      for (const victim of ["\n", '"', "x\t", "\\n", "ab\u0001"]) expect(readsRight(victim)).toBe(true)
      expect(JSON.parse('{"a\\\\":[1,2]}', (_key, value) => (typeof value === "number" ? value * 10 : value))).toEqual({
        "a\\": [10, 20]
      })
      expect(() => JSON.parse("{")).toThrow(SyntaxError)
    })
  )
})
