import { Effect } from "effect"
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto"
import type { ScryptOptions } from "node:crypto"

const params = { N: 16384, r: 8, p: 1 } as const
const keyLength = 32

/** Fails (rather than throwing) when scrypt refuses the parameters, e.g. of a corrupt stored hash. */
const derive = (password: string, salt: Buffer, options: ScryptOptions) =>
  Effect.callback<Buffer, Error>((resume) => {
    try {
      scrypt(password.normalize("NFKC"), salt, keyLength, { ...options, maxmem: 64 * 1024 * 1024 }, (error, key) => {
        resume(error ? Effect.fail(error) : Effect.succeed(key))
      })
    } catch (error) {
      resume(Effect.fail(error instanceof Error ? error : new Error(String(error))))
    }
  })

/** `scrypt$N$r$p$<salt>$<key>`, base64: the parameters travel with the hash so they can be raised later. */
export const hashPassword = (password: string) =>
  Effect.gen(function* () {
    const salt = randomBytes(16)
    const key = yield* Effect.orDie(derive(password, salt, params))
    return `scrypt$${params.N}$${params.r}$${params.p}$${salt.toString("base64")}$${key.toString("base64")}`
  })

/** Constant-time comparison; a malformed stored hash never matches. */
export const verifyPassword = (password: string, stored: string) =>
  Effect.gen(function* () {
    const [scheme, n, r, p, salt, key] = stored.split("$")
    if (scheme !== "scrypt" || !n || !r || !p || !salt || !key) return false
    const expected = Buffer.from(key, "base64")
    const actual = yield* derive(password, Buffer.from(salt, "base64"), {
      N: Number(n),
      r: Number(r),
      p: Number(p)
    }).pipe(Effect.option)
    return actual._tag === "Some" && actual.value.length === expected.length && timingSafeEqual(actual.value, expected)
  })

/**
 * A real hash of a random password, verified against when the email is
 * unknown, so a wrong email and a wrong password take the same time.
 */
export const decoyHash = Effect.runSync(Effect.cached(hashPassword(randomBytes(16).toString("hex"))))
