import { isErased } from "../api/Erased"
import { Domain } from "./digestBytes"
import { hashBytes, hashInput } from "./hashInput"

/** Salts and commitments travel as byte strings (`hashBytes`). */
type Bytes = string

const isMembers = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Byte 03: the salt of a node's child, from the node's salt and the child's key. */
const childSaltOf = (salt: Bytes, key: string): Bytes => {
  const input = hashInput(1 + salt.length + key.length * 3)
  input.set(Domain.salt, 0)
  const at = 1 + input.write(salt, 1, "latin1")
  return hashBytes(input, at + input.write(key, at, "utf8"))
}

/** Byte 00: a single value's commitment, its salt then its canonical JSON text. */
const primitiveOf = (salt: Bytes, text: string): Bytes => {
  const input = hashInput(1 + salt.length + text.length * 3)
  input.set(Domain.value, 0)
  const at = 1 + input.write(salt, 1, "latin1")
  return hashBytes(input, at + input.write(text, at, "utf8"))
}

/** Byte 02: a list's commitment, its elements' commitments in order. */
const elementsOf = (elements: ReadonlyArray<unknown>, salt: Bytes): Bytes => {
  const commitments: Array<Bytes> = []
  for (let index = 0; index < elements.length; index++) {
    commitments.push(nodeOf(elements[index], childSaltOf(salt, String(index))))
  }
  // The children are committed: the buffer is this node's from here on.
  const input = hashInput(1 + 32 * commitments.length)
  input.set(Domain.array, 0)
  let at = 1
  for (const commitment of commitments) at += input.write(commitment, at, "latin1")
  return hashBytes(input, at)
}

/** Byte 01: an object's commitment, per key in UTF-16 code unit order (`sort`'s own): its length, itself, its member's. */
const membersOf = (value: Readonly<Record<string, unknown>>, salt: Bytes): Bytes => {
  const keys = Object.keys(value).sort()
  const commitments: Array<Bytes | undefined> = []
  let size = 1
  for (const key of keys) {
    const member = value[key]
    commitments.push(member === undefined ? undefined : nodeOf(member, childSaltOf(salt, key)))
    size += 4 + key.length * 3 + 32
  }
  const input = hashInput(size)
  input.set(Domain.object, 0)
  let at = 1
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index]
    const commitment = commitments[index]
    if (key === undefined || commitment === undefined) continue
    const length = input.write(key, at + 4, "utf8")
    input.writeUInt32BE(length, at)
    at += 4 + length
    at += input.write(commitment, at, "latin1")
  }
  return hashBytes(input, at)
}

/** A single value's canonical JSON text (`canonicalJson` of a primitive). */
const primitiveText = (value: unknown): string =>
  value === null || value === undefined ? "null" : JSON.stringify(value)

const nodeOf = (value: unknown, salt: Bytes): Bytes => {
  if (isErased(value)) return Buffer.from(value.$erased, "hex").toString("latin1")
  if (isMembers(value)) return membersOf(value, salt)
  if (Array.isArray(value)) return elementsOf(value, salt)
  return primitiveOf(salt, primitiveText(value))
}

const bytesOf = (salt: Uint8Array): Bytes =>
  Buffer.from(salt.buffer, salt.byteOffset, salt.byteLength).toString("latin1")

const hexOf = (bytes: Bytes): string => Buffer.from(bytes, "latin1").toString("hex")

/**
 * `commit` (src/chain/commitments.ts) in hex of `value` as the member `key`
 * of a node salted `salt`, when every salt under it derives from there (no
 * salt published for any part of it): the same bytes, hashed without
 * allocating their parts. A row nothing was erased from commits its
 * snapshot and its diff this way, under its root salt.
 */
export const commitBelow = (value: unknown, salt: Uint8Array, key: string): string =>
  hexOf(nodeOf(value, childSaltOf(bytesOf(salt), key)))
