import { hash } from "node:crypto"

/**
 * Where the input of the ledger's hot hashes is written (a row's
 * commitments, its content, its link), grown when one needs more: their
 * parts' allocations (a Buffer per salt, per commitment, per
 * concatenation) cost several times the hashing (BENCHMARKS.md, "Ledger
 * verification"). One buffer is enough: each hash writes its whole input
 * and hashes it at once, synchronously.
 */
let buffer = Buffer.allocUnsafe(4096)

/** The buffer to write a hash's input into, at least `bytes` long; valid until the next call. */
export const hashInput = (bytes: number): Buffer => {
  if (buffer.length < bytes) buffer = Buffer.allocUnsafe(Math.max(bytes, buffer.length * 2))
  return buffer
}

/**
 * SHA-256 of the first `length` bytes of `input`, as a byte string (latin1:
 * one char a byte): `hash` gives one for a quarter of the cost of a Buffer,
 * and it is copied into the next input cheaper than hex is decoded.
 */
export const hashBytes = (input: Buffer, length: number): string => hash("sha256", input.subarray(0, length), "binary")
