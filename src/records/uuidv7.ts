import { randomUUID } from "node:crypto"

/**
 * A UUID version 7 (RFC 9562): 48 bits of Unix milliseconds, then random
 * bits, so ids made later sort after ids made earlier (to the millisecond)
 * and an entry's id tells roughly when it was added. The random bits are a
 * version 4 UUID's (its variant is version 7's too, its version digit is
 * replaced): `randomUUID` draws from a buffered pool, a `randomBytes` call
 * per id cost ten times as much (a bulk import makes one per line item).
 */
export const uuidv7 = (now: number = Date.now()): string => {
  const time = now.toString(16).padStart(12, "0")
  // Joined, not concatenated: one flat string, where `+` would leave a tree of pieces for as long as the id lives.
  return [time.slice(0, 8), time.slice(8, 12), `7${randomUUID().slice(15)}`].join("-")
}
