import { PgTypes } from "@effect/sql-pg"
import { Result } from "effect"
import { parseJson } from "../json/parseJson"

const utf8 = new TextDecoder()

const readWith =
  (skip: number) =>
  (bytes: Uint8Array, offset: number, size: number): Result.Result<unknown, PgTypes.CodecError> => {
    if (skip === 1 && (size === 0 || bytes[offset] !== 1)) {
      return Result.fail(new PgTypes.CodecError({ message: "Unsupported jsonb version byte" }))
    }
    try {
      return Result.succeed(parseJson(utf8.decode(bytes.subarray(offset + skip, offset + size))))
    } catch (cause) {
      return Result.fail(new PgTypes.CodecError({ message: `not JSON: ${String(cause)}` }))
    }
  }

/** A `json` or `jsonb` codec that reads with `parseJson` and writes as the driver's own does. */
const codecOf = (oid: number, skip: number): PgTypes.Codec<unknown> => {
  const read = readWith(skip)
  return {
    read,
    decode: (bytes) => read(bytes, 0, bytes.length),
    encode: (value) => PgTypes.encode(value, oid),
    write: (sink, value) => {
      const text = JSON.stringify(value)
      if (text === undefined)
        return Result.fail(new PgTypes.CodecError({ message: "Value cannot be serialised as JSON" }))
      if (skip === 1) sink.uint8(1)
      sink.utf8(text)
      return Result.void
    }
  }
}

/**
 * The driver's codecs with `json` and `jsonb` read through `parseJson`
 * (src/json/parseJson.ts says why): a row's JSON comes back with the keys
 * it was stored with, whatever was read before it.
 */
export const jsonReadingTypes = (): PgTypes.Registry => {
  const registry = PgTypes.makeRegistry()
  registry.register(PgTypes.OID.json, codecOf(PgTypes.OID.json, 0), { arrayOid: PgTypes.OID.jsonArray })
  registry.register(PgTypes.OID.jsonb, codecOf(PgTypes.OID.jsonb, 1), { arrayOid: PgTypes.OID.jsonbArray })
  return registry
}
