import { describe, expect, it } from "@effect/vitest"
import { Arbitrary } from "effect"
import { canonicalJson } from "../../src/chain/canonicalJson"
import { commit } from "../../src/chain/commitments"
import { integer, jsonValue, oneOf } from "../support/arbitraries"
import { reordered } from "./reordered"
import { parseJson } from "../../src/json/parseJson"

/**
 * The salted Merkle commitment of a snapshot or a diff (docs/ledger.md,
 * "Formats"): a function of the JSON value and the salt alone (not of the
 * order keys were built in, nor of a trip through JSON text), and any
 * single value changed, the commitment changes.
 */

const noneSalts = new Map<string, Uint8Array>()
const salt = Arbitrary.map(Arbitrary.array(integer(0, 255), { minLength: 16, maxLength: 16 }), (bytes) =>
  Uint8Array.from(bytes)
)
const commitment = (value: unknown, rowSalt: Uint8Array) => commit(value, "/record", rowSalt, noneSalts).toString("hex")

type Path = ReadonlyArray<string | number>

/** Where the single values (strings, numbers, booleans, null) of a JSON value are. */
const primitivePaths = (value: unknown, path: Path = []): Array<Path> => {
  if (value === null || typeof value !== "object") return [path]
  const entries: Array<readonly [string | number, unknown]> = Array.isArray(value)
    ? value.map((element, index) => [index, element] as const)
    : Object.entries(value)
  return entries.flatMap(([key, member]) => primitivePaths(member, [...path, key]))
}

const valueAt = (value: unknown, path: Path): unknown =>
  path.reduce<unknown>(
    (node, key) =>
      node !== null && typeof node === "object" ? Object.getOwnPropertyDescriptor(node, key)?.value : undefined,
    value
  )

/** The value with the single value at `path` replaced by `replacement`. */
const replaced = (value: unknown, path: Path, replacement: unknown): unknown => {
  const [head, ...rest] = path
  if (head === undefined) return replacement
  if (Array.isArray(value))
    return value.map((element, index) => (index === head ? replaced(element, rest, replacement) : element))
  if (value === null || typeof value !== "object") return value
  return Object.fromEntries(
    Object.entries(value).map(([key, member]) => [key, key === head ? replaced(member, rest, replacement) : member])
  )
}

const primitive = oneOf<unknown>(
  Arbitrary.Constant(null),
  Arbitrary.Constant(true),
  Arbitrary.Constant(false),
  Arbitrary.Constant(0),
  Arbitrary.Constant(""),
  Arbitrary.Constant("1"),
  Arbitrary.Constant(1),
  jsonValue.pipe(Arbitrary.filter((value) => value === null || typeof value !== "object"))
)

describe("commit", () => {
  it.prop(
    "equal JSON values with the same salt commit alike: whatever their key order, after a trip through JSON text",
    [jsonValue, salt, integer(0, 1_000)],
    ([value, rowSalt, shift]) => {
      const expected = commitment(value, rowSalt)
      expect(commitment(reordered(value, shift), rowSalt)).toBe(expected)
      expect(commitment(parseJson(JSON.stringify(value)), rowSalt)).toBe(expected)
    },
    { arbitrary: { runs: 300 } }
  )

  it.prop(
    "changing any single value changes the commitment",
    [jsonValue, salt, integer(0, 1_000_000), primitive],
    ([value, rowSalt, pick, candidate]) => {
      const paths = primitivePaths(value)
      const path = paths[pick % paths.length] ?? []
      const before = valueAt(value, path)
      // A different value by its canonical text (1 and 1.0 are one JSON value).
      const replacement =
        canonicalJson(candidate) !== canonicalJson(before)
          ? candidate
          : typeof before === "string"
            ? `${before}·`
            : "changed"
      const changed = replaced(value, path, replacement)
      expect(canonicalJson(changed)).not.toBe(canonicalJson(value))
      expect(commitment(changed, rowSalt)).not.toBe(commitment(value, rowSalt))
    },
    { arbitrary: { runs: 500 } }
  )

  it.prop(
    "another salt, another commitment (a value that holds any single value)",
    [jsonValue, salt, salt],
    ([value, one, other]) => {
      if (primitivePaths(value).length === 0 || Buffer.from(one).equals(other)) return
      expect(commitment(value, other)).not.toBe(commitment(value, one))
    },
    { arbitrary: { runs: 200 } }
  )
})
