import type { RecordValues } from "../api/Json"
import type { Changes } from "../api/Changes"
import { canonicalJson } from "./canonicalJson"
import type { PublishedSalts } from "./commitments"
import { childSalt, commit } from "./commitments"
import { Domain, sha256 } from "./digestBytes"
import { hashBytes, hashInput } from "./hashInput"
import { commitBelow } from "./saltedCommit"

/** What an audit row's hash covers besides its place in the chain (docs/ledger.md, "Formats"). */
export interface LedgerRow {
  readonly id: string
  /** JSON: hashed as its canonical text. */
  readonly actor: unknown
  readonly correlationId: string
  readonly parentCorrelationId: string | null
  readonly businessObject: string
  readonly businessObjectId: string
  readonly recordVersion: number | null
  readonly operation: string
  readonly cause: unknown
  readonly record: RecordValues | null
  readonly changes: Changes | null
}

/** Where a row's value salts come from: its root salt, or (once a value of it was erased) the salts published for what is left. */
export interface RowSalts {
  readonly salt: Uint8Array | null
  readonly published: PublishedSalts
}

const noneSalts: PublishedSalts = new Map()

export const rootSalts = (salt: Uint8Array): RowSalts => ({ salt, published: noneSalts })

/**
 * The hex commitment of a row's snapshot or diff. Nothing of the row erased
 * (its root salt kept, no salt published), by the path that allocates
 * nothing per node; else by `commit`, the reference it matches byte for byte.
 */
const part = (value: RecordValues | Changes | null, name: "record" | "changes", salts: RowSalts): string | null => {
  if (value === null) return null
  if (salts.salt !== null && salts.published.size === 0) return commitBelow(value, salts.salt, name)
  return commit(
    value,
    `/${name}`,
    salts.salt === null ? undefined : childSalt(salts.salt, name),
    salts.published
  ).toString("hex")
}

/** `,"key":` and the value's canonical JSON; nothing for an undefined value (canonical JSON leaves its key out). */
const member = (key: string, value: unknown) => (value === undefined ? "" : `,"${key}":${canonicalJson(value)}`)

/**
 * The canonical JSON of a row's content (docs/ledger.md, "Formats"), its
 * keys written out in their sorted order: the one object every row hashes,
 * so it is not sorted again for each.
 */
const contentJson = (row: LedgerRow, record: string | null, changes: string | null): string =>
  `{${(
    member("actor", row.actor) +
      member("businessObject", row.businessObject) +
      member("businessObjectId", row.businessObjectId) +
      member("cause", row.cause) +
      member("changes", changes) +
      member("correlationId", row.correlationId) +
      member("id", row.id) +
      member("operation", row.operation) +
      member("parentCorrelationId", row.parentCorrelationId) +
      member("record", record) +
      member("recordVersion", row.recordVersion) +
      member("v", 1)
  ).slice(1)}}`

/** The hash of a row's content: its columns in canonical JSON, its snapshot and diff as their salted commitments. */
export const contentHash = (row: LedgerRow, salts: RowSalts): Buffer => {
  const json = contentJson(row, part(row.record, "record", salts), part(row.changes, "changes", salts))
  const input = hashInput(1 + json.length * 3)
  input.set(Domain.content, 0)
  return Buffer.from(hashBytes(input, 1 + input.write(json, 1, "utf8")), "latin1")
}

/**
 * A row's link in its workspace's chain: the previous link, the row's feed
 * position, its transaction's timestamp (microseconds since the Unix epoch,
 * as PostgreSQL keeps it) and its content hash. The write path computes the
 * same in SQL (`src/unitOfWork/AuditStaging.ts`).
 */
export const linkHash = (previous: Uint8Array, position: bigint, atMicros: bigint, content: Uint8Array): Buffer => {
  const input = hashInput(1 + previous.length + 16 + content.length)
  input.set(Domain.link, 0)
  input.set(previous, 1)
  let at = 1 + previous.length
  at = input.writeBigInt64BE(position, at)
  at = input.writeBigInt64BE(atMicros, at)
  input.set(content, at)
  return Buffer.from(hashBytes(input, at + content.length), "latin1")
}

/** The link before a workspace's first row: bound to the workspace, so no two chains share a prefix. */
export const genesisHash = (workspaceId: string): Buffer => sha256(Domain.genesis, "abs-ledger/v1", workspaceId)
