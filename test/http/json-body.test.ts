import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { depthBeyond, firstBadString, maxJsonDepth, parseJsonBody } from "../../src/http/JsonBody"

const bytes = (text: string) => new TextEncoder().encode(text)

describe("the JSON body checks (src/http/JsonBody.ts)", () => {
  it("counts nesting outside strings only: brackets and escaped quotes inside strings do not count", () => {
    const inString = `{"a": "${"[".repeat(100)}\\"${"{".repeat(100)}"}`
    expect(depthBeyond(inString, 1)).toBeUndefined()
    expect(depthBeyond(`[${"[".repeat(63)}${"]".repeat(63)}]`, maxJsonDepth)).toBeUndefined()
    expect(depthBeyond(`[{"a":[{"b":1}]}]`, 3)).toBe(7)
    // 1,000,000 levels: no recursion, no stack overflow.
    expect(depthBeyond("[".repeat(1_000_000), maxJsonDepth)).toBe(maxJsonDepth)
  })

  it("finds NUL and lone surrogates in values and keys at any depth, and lets paired surrogates pass", () => {
    expect(firstBadString({ a: [{ b: "ok \ud83d\ude80" }] })).toBeUndefined()
    expect(firstBadString({ a: [{ b: "x\u0000" }] })).toBe("body.a[0].b contains a NUL character (\\u0000)")
    expect(firstBadString(["\udc00"])).toMatch(/^body\[0\] contains a lone UTF-16 surrogate/)
    expect(firstBadString({ a: { "k\ud800": 1 } })).toMatch(/^the key "k\\ud800" in body\.a contains a lone/)
    // A long key is quoted short.
    expect(firstBadString({ [`${"k".repeat(1000)}\u0000`]: 1 })?.length).toBeLessThan(150)
  })

  it("parses a good body, and names what is wrong with a bad one", () => {
    expect(parseJsonBody(bytes(`{"a": [1, "b"]}`))).toEqual(Result.succeed({ a: [1, "b"] }))
    expect(parseJsonBody(bytes(""))).toEqual(Result.fail("the body is empty: send a JSON value"))
    expect(parseJsonBody(new Uint8Array([0xc3, 0x28]))).toEqual(Result.fail("the body is not valid UTF-8"))
    expect(parseJsonBody(bytes(`{"a": 1,}`))).toEqual(
      Result.fail("the body is not valid JSON: Expected double-quoted property name in JSON at position 8")
    )
  })
})
