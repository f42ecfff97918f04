import { describe, expect, it } from "@effect/vitest"
import { freshSalt } from "../../src/unitOfWork/saltPool"

/**
 * The write path's salts (src/unitOfWork/saltPool.ts) are cut from a
 * buffer of random bytes: each is 16 bytes of its own, and stays what it was
 * handed out as after the buffer is replaced.
 */
describe("freshSalt", () => {
  it("gives 16-byte salts, no two alike, that do not change when the buffer is replaced", () => {
    const salts = Array.from({ length: 1_000 }, freshSalt)
    const copies = salts.map((salt) => Buffer.from(salt).toString("hex"))
    Array.from({ length: 1_000 }, freshSalt)
    expect(salts.every((salt) => salt.length === 16)).toBe(true)
    expect(new Set(copies).size).toBe(salts.length)
    expect(salts.map((salt) => salt.toString("hex"))).toEqual(copies)
  })
})
