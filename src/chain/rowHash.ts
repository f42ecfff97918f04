import type { RecordValues } from "../api/Json"
import type { Changes } from "../api/Changes"
import { canonicalJson } from "./canonicalJson"
import type { PublishedSalts } from "./commitments"
import { childSalt, commit } from "./commitments"
import { Domain, int64, sha256 } from "./digestBytes"

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

const part = (value: RecordValues | Changes | null, name: "record" | "changes", salts: RowSalts): string | null =>
  value === null
    ? null
    : commit(
        value,
        `/${name}`,
        salts.salt === null ? undefined : childSalt(salts.salt, name),
        salts.published
      ).toString("hex")

/** The hash of a row's content: its columns in canonical JSON, its snapshot and diff as their salted commitments. */
export const contentHash = (row: LedgerRow, salts: RowSalts): Buffer =>
  sha256(
    Domain.content,
    canonicalJson({
      v: 1,
      id: row.id,
      actor: row.actor,
      correlationId: row.correlationId,
      parentCorrelationId: row.parentCorrelationId,
      businessObject: row.businessObject,
      businessObjectId: row.businessObjectId,
      recordVersion: row.recordVersion,
      operation: row.operation,
      cause: row.cause,
      record: part(row.record, "record", salts),
      changes: part(row.changes, "changes", salts)
    })
  )

/**
 * A row's link in its workspace's chain: the previous link, the row's feed
 * position, its transaction's timestamp (microseconds since the Unix epoch,
 * as PostgreSQL keeps it) and its content hash. The write path computes the
 * same in SQL (`src/unitOfWork/AuditStaging.ts`).
 */
export const linkHash = (previous: Uint8Array, position: bigint, atMicros: bigint, content: Uint8Array): Buffer =>
  sha256(Domain.link, previous, int64(position), int64(atMicros), content)

/** The link before a workspace's first row: bound to the workspace, so no two chains share a prefix. */
export const genesisHash = (workspaceId: string): Buffer => sha256(Domain.genesis, "abs-ledger/v1", workspaceId)
