import { isErased } from "../api/Erased"
import { byKey, canonicalJson } from "./canonicalJson"
import { Domain, sha256, uint32 } from "./digestBytes"

/** A value's place in an audit row, as a JSON Pointer (RFC 6901): `/record/email`, `/changes/lines/added/0/values/qty`. */
export type Pointer = string

export const childPointer = (pointer: Pointer, key: string | number): Pointer =>
  `${pointer}/${String(key).replaceAll("~", "~0").replaceAll("/", "~1")}`

/** The salt of a node's child: derived one way, so publishing it reveals neither the parent's nor a sibling's. */
export const childSalt = (salt: Uint8Array, key: string | number): Buffer => sha256(Domain.salt, salt, String(key))

/**
 * Where a node's salt comes from: derived from its parent's, or, in a row
 * with erased values (whose root salt is destroyed), published for it.
 */
export type PublishedSalts = ReadonlyMap<Pointer, Uint8Array>

export class MissingSalt extends Error {
  constructor(readonly pointer: Pointer) {
    super(`no salt for the value at ${pointer}`)
  }
}

/**
 * The salted commitment of a value (a Merkle tree over the JSON): a
 * primitive commits to its own salt and its canonical text, so a commitment
 * reveals nothing guessable; an object commits to its keys and its members'
 * commitments, an array to its elements'. Only primitives are ever erased
 * (objects and arrays keep their shape, docs/ledger.md), and an erased one
 * stands for its commitment, so every container is recomputed from what is
 * left. A container's salt only derives its children's.
 */
export const commit = (
  value: unknown,
  pointer: Pointer,
  derived: Uint8Array | undefined,
  published: PublishedSalts
): Buffer => {
  if (isErased(value)) return Buffer.from(value.$erased, "hex")
  const salt = published.get(pointer) ?? derived
  if (value === null || value === undefined || typeof value !== "object") {
    if (salt === undefined) throw new MissingSalt(pointer)
    return sha256(Domain.value, salt, canonicalJson(value))
  }
  const childOf = (key: string | number) => (salt === undefined ? undefined : childSalt(salt, key))
  if (Array.isArray(value)) {
    const parts: Array<Uint8Array> = [Domain.array]
    value.forEach((element, index) => {
      parts.push(commit(element, childPointer(pointer, index), childOf(index), published))
    })
    return sha256(...parts)
  }
  const parts: Array<Uint8Array | string> = [Domain.object]
  for (const [key, member] of Object.entries(value).sort(byKey)) {
    if (member === undefined) continue
    parts.push(uint32(Buffer.byteLength(key)), key, commit(member, childPointer(pointer, key), childOf(key), published))
  }
  return sha256(...parts)
}
