import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Cause, Effect, Exit, Schema } from "effect"
import { hashPassword, verifyPassword } from "../../src/auth/Password"

/**
 * Any password a person might type, including non-ASCII and `$` (the hash's own separator). Lone
 * surrogates are left out: nobody types one, and UTF-8 turns every one of them into U+FFFD.
 */
const password = Arbitrary.schema(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(40))).pipe(
  Arbitrary.filter((typed) => !/\p{Cs}/u.test(typed))
)

describe("password hashing", () => {
  // scrypt costs tens of milliseconds a call: few runs, each checking both directions.
  it.effect.prop(
    "a hash verifies its own password and no other",
    [password, password],
    ([right, wrong]) =>
      Effect.gen(function* () {
        const hash = yield* hashPassword(right)
        expect(hash).toMatch(/^scrypt\$16384\$8\$1\$[A-Za-z0-9+/]{22}==\$[A-Za-z0-9+/]{43}=$/)
        expect(yield* verifyPassword(right, hash)).toBe(true)
        if (wrong.normalize("NFKC") !== right.normalize("NFKC")) {
          expect(yield* verifyPassword(wrong, hash)).toBe(false)
        }
      }),
    { timeout: 30_000, arbitrary: { runs: 8 } }
  )

  it.effect("a wrong password, a different case, a prefix and an extension all fail", () =>
    Effect.gen(function* () {
      const hash = yield* hashPassword("correct horse battery")
      expect(yield* verifyPassword("correct horse battery", hash)).toBe(true)
      for (const wrong of ["Correct horse battery", "correct horse batter", "correct horse battery ", "", "wrong"]) {
        expect(yield* verifyPassword(wrong, hash)).toBe(false)
      }
    })
  )

  it.effect("passwords are compared after NFKC normalisation (one typed on another keyboard still matches)", () =>
    Effect.gen(function* () {
      // U+212B ANGSTROM SIGN and U+00C5 LATIN CAPITAL LETTER A WITH RING ABOVE are NFKC-equal.
      const hash = yield* hashPassword("\u212Bngstr\u00F6m-pass")
      expect(yield* verifyPassword("\u00C5ngstr\u00F6m-pass", hash)).toBe(true)
    })
  )

  it.effect("two hashes of one password differ (random salt), and each verifies", () =>
    Effect.gen(function* () {
      const [first, second] = yield* Effect.all([hashPassword("same password"), hashPassword("same password")], {
        concurrency: 2
      })
      expect(first).not.toBe(second)
      const salt = (hash: string) => hash.split("$")[4]
      expect(salt(first)).not.toBe(salt(second))
      expect(yield* verifyPassword("same password", first)).toBe(true)
      expect(yield* verifyPassword("same password", second)).toBe(true)
    })
  )

  it.effect("a hash with its key or salt altered no longer verifies", () =>
    Effect.gen(function* () {
      const hash = yield* hashPassword("tamper-proof")
      const parts = hash.split("$")
      const flip = (value: string) => (value.startsWith("A") ? "B" : "A") + value.slice(1)
      const withKey = [...parts.slice(0, 5), flip(parts[5] ?? "")].join("$")
      const withSalt = [...parts.slice(0, 4), flip(parts[4] ?? ""), parts[5] ?? ""].join("$")
      expect(yield* verifyPassword("tamper-proof", withKey)).toBe(false)
      expect(yield* verifyPassword("tamper-proof", withSalt)).toBe(false)
    })
  )

  it.effect("a malformed stored hash is false, not an error", () =>
    Effect.gen(function* () {
      const good = yield* hashPassword("pw-pw-pw-pw")
      const [, n, r, p, salt, key] = good.split("$")
      const malformed = [
        "",
        "garbage",
        "scrypt",
        `bcrypt$${n}$${r}$${p}$${salt}$${key}`,
        `scrypt$${n}$${r}$${p}$${salt}`,
        `scrypt$${n}$${r}$${p}$$${key}`,
        `scrypt$${n}$${r}$${p}$${salt}$`,
        `scrypt$${n}$${r}$${p}$${salt}$${key?.slice(0, 20)}`,
        `$${n}$${r}$${p}$${salt}$${key}`
      ]
      for (const stored of malformed) {
        expect(yield* verifyPassword("pw-pw-pw-pw", stored), stored).toBe(false)
      }
    })
  )

  it.effect("a stored hash with parameters scrypt refuses is false, not a defect", () =>
    Effect.gen(function* () {
      const good = yield* hashPassword("pw-pw-pw-pw")
      const [, , , , salt, key] = good.split("$")
      const refused = [
        `scrypt$abc$8$1$${salt}$${key}`, // N not a number
        `scrypt$3$8$1$${salt}$${key}`, // N not a power of two
        `scrypt$1048576$8$1$${salt}$${key}` // 1 GiB of memory, beyond maxmem
      ]
      for (const stored of refused) {
        const exit = yield* Effect.exit(verifyPassword("pw-pw-pw-pw", stored))
        expect(Exit.isSuccess(exit) ? exit.value : Cause.pretty(exit.cause).split("\n")[0], stored).toBe(false)
      }
    })
  )
})
