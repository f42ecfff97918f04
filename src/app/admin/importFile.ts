import { createHash } from "node:crypto"
import { createReadStream } from "node:fs"
import { createInterface } from "node:readline"
import type { BulkItem } from "../../api/BulkWrite"
import { parseJson } from "../../json/parseJson"

/** One batch of an import file: its items, where it starts, and its Idempotency-Key. */
export interface ImportBatch {
  /** From 1. */
  readonly number: number
  /** The file's line number of each item (empty lines are skipped, not counted as items). */
  readonly lines: ReadonlyArray<number>
  readonly items: ReadonlyArray<BulkItem>
  /** Derived from every line up to this batch's last: the same file cut the same way gives the same keys. */
  readonly key: string
  /** The file's bytes read so far, for the progress bar. */
  readonly bytesRead: number
}

/** A line that is no item: its number and why. */
export class BadImportLine extends Error {
  constructor(
    readonly line: number,
    readonly reason: string
  ) {
    super(`line ${line}: ${reason}`)
  }
}

const isObject = (value: unknown): value is { readonly [key: string]: unknown } =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * A line of an import file as a bulk item (docs/writes.md, "Importing a
 * file"): an object with an `id` is an update (`{"id", "values", "ifMatch"?}`),
 * any other object the values of a create.
 */
export const itemOfLine = (text: string, line: number): BulkItem => {
  let value: unknown
  try {
    value = parseJson(text)
  } catch {
    throw new BadImportLine(line, "not JSON")
  }
  if (!isObject(value)) throw new BadImportLine(line, "not a JSON object (a record's values, or {id, values})")
  if (!Object.hasOwn(value, "id")) return { create: value }
  const { id, values, ifMatch, ...rest } = value
  const extra = Object.keys(rest)
  if (
    typeof id !== "string" ||
    !isObject(values) ||
    extra.length > 0 ||
    !(ifMatch === undefined || Number.isSafeInteger(ifMatch))
  )
    throw new BadImportLine(
      line,
      `an update is {"id": "<record id>", "values": {...}, "ifMatch": <version>?}${extra.length > 0 ? `, not ${extra.map((key) => JSON.stringify(key)).join(", ")}` : ""}`
    )
  return { update: typeof ifMatch === "number" ? { id, values, ifMatch } : { id, values } }
}

/** The hash of a batch's key: the key before it, then each of the batch's lines after a newline. */
const keyHash = (previous: string) => createHash("sha256").update(previous)

/**
 * The batches of an NDJSON file, `size` items each (the last one fewer),
 * read as they are needed: never the whole file in memory. Each batch's key
 * chains the key before it with the batch's lines (as bytes in the file), from
 * a seed naming the workspace and business object: a batch's key stands for
 * the file up to its last line, so running the same import again (or an import
 * of the same file with lines added at its end) gives the batches already
 * imported the keys they were imported under.
 */
export async function* importBatches(path: string, seed: string, size: number): AsyncGenerator<ImportBatch> {
  const input = createReadStream(path)
  const reader = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })
  let key = keyHash("records import").update("\n").update(seed).digest("hex")
  // Each line goes into the key as it is read: the batch holds its items, not its lines' texts as well.
  let hash = keyHash(key)
  let number = 0
  let lineNumber = 0
  let bytesRead = 0
  let lines: Array<number> = []
  let items: Array<BulkItem> = []
  const batch = (): ImportBatch => {
    key = hash.digest("hex")
    hash = keyHash(key)
    number++
    const made = { number, lines, items, key: `import-${key}`, bytesRead }
    lines = []
    items = []
    return made
  }
  try {
    for await (const text of reader) {
      lineNumber++
      bytesRead += Buffer.byteLength(text) + 1
      if (text.trim().length === 0) continue
      items.push(itemOfLine(text, lineNumber))
      hash.update("\n").update(text)
      lines.push(lineNumber)
      if (items.length === size) yield batch()
    }
    if (items.length > 0) yield batch()
  } finally {
    reader.close()
    input.destroy()
  }
}
