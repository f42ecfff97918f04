import { linkHash } from "./rowHash"

/** One row as the verifier reads it, in feed order. */
export interface ChainRow {
  readonly position: bigint
  readonly atMicros: bigint
  /** The row's insertion order (its `seq`): rows are inserted in feed order, so a row moved shows against it. */
  readonly order: bigint
  /** The hash stored with the row; null: the service never chained it. */
  readonly stored: Uint8Array | null
  /** The row's content hash as recomputed now; null: it cannot be (a value has no salt left). */
  readonly content: Uint8Array | null
}

/** A digest signed earlier: the chain's link at `position`. */
export interface DigestClaim {
  readonly position: bigint
  readonly hash: Uint8Array
  readonly label: string
}

export type ChainFault =
  | { readonly kind: "changed"; readonly position: bigint; readonly detail: string }
  | { readonly kind: "missing"; readonly position: bigint; readonly detail: string }
  | { readonly kind: "reordered"; readonly position: bigint; readonly detail: string }
  | { readonly kind: "inserted"; readonly position: bigint; readonly detail: string }
  | { readonly kind: "rewritten"; readonly position: bigint; readonly detail: string }

export type ChainVerdict =
  | {
      readonly ok: true
      readonly rows: number
      readonly head: { readonly position: bigint; readonly hash: Uint8Array }
    }
  | { readonly ok: false; readonly rows: number; readonly fault: ChainFault }

const same = (a: Uint8Array | null, b: Uint8Array | null) => a !== null && b !== null && Buffer.from(a).equals(b)

/** Whether `row`'s stored hash is its link from `from` at `position`. */
const chainsFrom = (row: ChainRow, from: Uint8Array | null, position: bigint) =>
  from !== null && row.content !== null && same(linkHash(from, position, row.atMicros, row.content), row.stored)

/** A row whose stored hash the chain did not reach: the next row tells why. */
interface Suspect {
  readonly row: ChainRow
  /** The chain's link before it. */
  readonly previous: Uint8Array
  /** The link before that one: a forged row that chains correctly shows only by the row after it. */
  readonly beforePrevious: Uint8Array | null
  /** Whether positions were skipped just before it (allowed only among the rows older than the ledger). */
  readonly afterGap: boolean
}

/**
 * Recomputes a workspace's chain row by row (docs/ledger.md, "Verification")
 * and stops at the first position that fails. Where a row's stored hash
 * disagrees with the chain, the next row tells what happened: the chain goes
 * on from the row (its content changed), or the next row chains from where
 * this one should (a row was inserted before it), or the two chain in the
 * other order (reordered), or the chain resumes some positions on (rows
 * were removed and the rest renumbered); past the last row, the workspace's
 * counter (its last position and head) tells rows removed from the end or
 * forged after it. A history rewritten consistently is
 * only caught by a digest signed before: the first digest the recomputed
 * chain disagrees with bounds where it was rewritten.
 */
export class ChainVerifier {
  private expected = 1n
  private recomputed: Uint8Array
  private beforeRecomputed: Uint8Array | null = null
  private rows = 0
  private suspect: Suspect | null = null
  private afterGap = false
  private fault: ChainFault | null = null
  private readonly digests: Array<DigestClaim>
  private lastGoodDigest = 0n

  constructor(
    genesis: Uint8Array,
    digests: ReadonlyArray<DigestClaim>,
    /** The last position the workspace's counter handed out. */
    private readonly headPosition: bigint,
    /** Up to here rows were chained by the migration, as found: their positions may have gaps. */
    private readonly chainedFrom: bigint = 0n,
    /** The counter's head: the link of the row at `headPosition` (null: not known). */
    private readonly headHash: Uint8Array | null = null
  ) {
    this.recomputed = genesis
    this.digests = [...digests].sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0))
  }

  /** Whether a fault is found: nothing pushed after it changes the verdict. */
  get done(): boolean {
    return this.fault !== null
  }

  push(row: ChainRow): void {
    if (this.fault !== null) return
    if (this.suspect !== null) {
      this.fault = this.classify(this.suspect, row)
      return
    }
    this.rows++
    this.afterGap = row.position > this.expected
    // A gap among the rows older than the ledger is no fault: positions were once the identity column's values.
    if (this.afterGap && row.position > this.chainedFrom) {
      this.fault = {
        kind: "missing",
        position: this.expected,
        detail: `no row at position${row.position - this.expected > 1n ? `s ${this.expected}-${row.position - 1n}` : ` ${this.expected}`}: removed`
      }
      return
    }
    if (row.position < this.expected) {
      this.fault = { kind: "inserted", position: row.position, detail: `a second row at position ${row.position}` }
      return
    }
    if (row.stored === null) {
      this.fault = { kind: "inserted", position: row.position, detail: "a row the service never chained (no hash)" }
      return
    }
    const link = row.content === null ? null : linkHash(this.recomputed, row.position, row.atMicros, row.content)
    if (link === null || !same(link, row.stored)) {
      this.suspect = {
        row,
        previous: this.recomputed,
        beforePrevious: this.beforeRecomputed,
        afterGap: this.afterGap
      }
      return
    }
    this.advance(row.position, link)
  }

  finish(): ChainVerdict {
    if (this.fault === null && this.suspect !== null) {
      this.fault = this.classify(this.suspect, null)
    }
    if (this.fault === null && this.expected - 1n < this.headPosition) {
      this.fault = {
        kind: "missing",
        position: this.expected,
        detail: `the ledger ends at position ${this.expected - 1n}, its counter at ${this.headPosition}: the last rows were removed`
      }
    }
    if (this.fault === null) {
      const unmatched = this.digests.find((digest) => digest.position >= this.expected)
      if (unmatched !== undefined) {
        this.fault = {
          kind: "missing",
          position: this.expected,
          detail: `${unmatched.label} was signed at position ${unmatched.position}, the ledger ends at ${this.expected - 1n}`
        }
      }
    }
    if (this.fault === null && this.headHash !== null && !same(this.recomputed, this.headHash)) {
      this.fault = {
        kind: "missing",
        position: this.expected,
        detail: `the counter's head is not the link of the last row (${this.expected - 1n}): rows after it were removed and the counter moved back, or the counter was changed`
      }
    }
    return this.fault === null
      ? { ok: true, rows: this.rows, head: { position: this.expected - 1n, hash: this.recomputed } }
      : { ok: false, rows: this.rows, fault: this.fault }
  }

  private advance(position: bigint, link: Uint8Array) {
    this.beforeRecomputed = this.recomputed
    this.recomputed = link
    this.expected = position + 1n
    for (const digest of this.digests) {
      if (digest.position !== position) continue
      if (same(digest.hash, link)) {
        this.lastGoodDigest = position
      } else {
        this.fault = {
          kind: "rewritten",
          position: this.lastGoodDigest + 1n,
          detail: `the chain at position ${position} does not match ${digest.label}: history at or before it was rewritten after that digest was signed (every row up to ${this.lastGoodDigest} matches the digests before it)`
        }
        return
      }
    }
  }

  /**
   * What happened at a row whose stored hash the chain does not reach, told
   * by the row after it (or, at the end, by the counter's head).
   */
  private classify({ afterGap, beforePrevious, previous, row }: Suspect, next: ChainRow | null): ChainFault {
    const p = row.position
    const stored = row.stored
    // The row chains from two links back, one position back: the row before it was put in its place (forged with
    // a correct link) and it, with every row after, renumbered up.
    if (!afterGap && chainsFrom(row, beforePrevious, p - 1n)) {
      return {
        kind: "inserted",
        position: p - 1n,
        detail: `a row was inserted at position ${p - 1n} and the rows after it renumbered`
      }
    }
    const contentDetail =
      row.content === null
        ? "a value of the row has no salt left to check it by"
        : "the row's content no longer matches its hash"
    if (next !== null && next.position === p + 1n) {
      if (chainsFrom(next, previous, p) && chainsFrom(row, next.stored, p + 1n)) {
        return { kind: "reordered", position: p, detail: `the rows at positions ${p} and ${p + 1n} were swapped` }
      }
      if (chainsFrom(next, stored, p + 1n) && afterGap) {
        return { kind: "missing", position: p, detail: `the row before position ${p} was removed` }
      }
      if (chainsFrom(next, stored, p + 1n)) return { kind: "changed", position: p, detail: contentDetail }
      // Before the order: a forged row is the newest of all, as a row moved back from later would be.
      if (chainsFrom(next, previous, p)) {
        return {
          kind: "inserted",
          position: p,
          detail: `a row was inserted at position ${p} and the rows after it renumbered`
        }
      }
      const removed = this.removedBefore(next, stored, p)
      if (removed > 0n) {
        return {
          kind: "missing",
          position: p,
          detail: `${removed === 1n ? `the row at position ${p} was` : `the rows at positions ${p}-${p + removed - 1n} were`} removed and the rows after renumbered`
        }
      }
      if (next.order < row.order) {
        return {
          kind: "reordered",
          position: p,
          detail: `the row at position ${p} was inserted after the row at ${p + 1n}: rows were moved`
        }
      }
    }
    if (next === null && p > this.headPosition) {
      return {
        kind: "inserted",
        position: p,
        detail: `a row past the last position the service handed out (${this.headPosition})`
      }
    }
    if (next === null && same(stored, this.headHash)) {
      return p < this.headPosition
        ? {
            kind: "missing",
            position: p,
            detail: `${p + 1n === this.headPosition ? `the row at position ${p} was` : `the rows at positions ${p}-${this.headPosition - 1n} were`} removed and the last row renumbered into ${p}`
          }
        : { kind: "changed", position: p, detail: contentDetail }
    }
    return {
      kind: "changed",
      position: p,
      detail: row.content === null ? contentDetail : "the row does not chain from the row before it"
    }
  }

  /**
   * How many rows were removed at `p` with the rows after renumbered down:
   * the row now after `p` chains from the one at `p` at its old position.
   * 0 when it does not (a cost of one hash per position left, paid once, on
   * a fault).
   */
  private removedBefore(next: ChainRow, stored: Uint8Array | null, p: bigint): bigint {
    for (let old = p + 2n; old <= this.headPosition; old++) {
      if (chainsFrom(next, stored, old)) return old - p - 1n
    }
    return 0n
  }
}
