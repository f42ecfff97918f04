import { hash } from "node:crypto"

const bytesOf = (part: Uint8Array | string): Uint8Array => (typeof part === "string" ? Buffer.from(part) : part)

/**
 * SHA-256 of the parts, one after another: every hash of the ledger (docs/ledger.md, "Formats").
 * One-shot `hash` of the joined parts, asked for hex: a row's commitments take dozens of hashes of a few
 * dozen bytes each, and a `createHash` object per hash cost 2.5 times the CPU, `hash` asked for a Buffer
 * 1.5 times (Node 24; BENCHMARKS.md, "Ledger").
 */
export const sha256 = (...parts: ReadonlyArray<Uint8Array | string>): Buffer =>
  Buffer.from(hash("sha256", Buffer.concat(parts.map(bytesOf)), "hex"), "hex")

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
