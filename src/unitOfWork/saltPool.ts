import { randomBytes } from "node:crypto"

const saltBytes = 16
const saltsPerFill = 256

let pool = randomBytes(saltBytes * saltsPerFill)
let handedOut = 0

/**
 * A fresh random 16-byte salt for an audit row's commitments (docs/ledger.md,
 * "Formats"), cut from a buffer filled 256 salts at a time: one `randomBytes`
 * call costs about as much for 4 KiB as for 16 bytes, some 10 µs of a unit of
 * work (BENCHMARKS.md, "Ledger"), and Node's `randomUUID` buffers its
 * randomness the same way. The buffer is replaced, never refilled, so a salt
 * handed out never changes and no two rows share one.
 */
export const freshSalt = (): Buffer => {
  if (handedOut === saltsPerFill) {
    pool = randomBytes(saltBytes * saltsPerFill)
    handedOut = 0
  }
  const salt = pool.subarray(saltBytes * handedOut, saltBytes * (handedOut + 1))
  handedOut++
  return salt
}
