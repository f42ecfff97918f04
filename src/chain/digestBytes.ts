import { createHash } from "node:crypto"

/** SHA-256 of the parts, one after another: every hash of the ledger (docs/ledger.md, "Formats"). */
export const sha256 = (...parts: ReadonlyArray<Uint8Array | string>): Buffer => {
  const hash = createHash("sha256")
  for (const part of parts) hash.update(part)
  return hash.digest()
}

/** What each hash of the ledger hashes first, so that no two kinds of input can ever hash alike. */
export const Domain = {
  value: Uint8Array.of(0),
  object: Uint8Array.of(1),
  array: Uint8Array.of(2),
  salt: Uint8Array.of(3),
  content: Uint8Array.of(4),
  link: Uint8Array.of(5),
  genesis: Uint8Array.of(6)
} as const

export const uint32 = (n: number): Buffer => {
  const bytes = Buffer.alloc(4)
  bytes.writeUInt32BE(n)
  return bytes
}

export const int64 = (n: bigint): Buffer => {
  const bytes = Buffer.alloc(8)
  bytes.writeBigInt64BE(n)
  return bytes
}
