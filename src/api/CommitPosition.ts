/**
 * Read-your-writes over a read replica (docs/scale-out.md, "Read replicas"):
 * every write answer names the position in PostgreSQL's write-ahead log at
 * or past its commit (an LSN, `16/B374D848`), and a read sent with it is
 * served by the replica only once the replica has replayed that far.
 * Without `DATABASE_READ_URL` the header is neither sent nor read.
 */

/** On a write's answer: its commit position. On a request: the highest position the caller has seen. */
export const commitLsnHeader = "x-commit-lsn"

const lsnText = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/

/** An LSN as PostgreSQL writes it (`hi/lo`, hexadecimal) as one number; none for anything else. */
export const parseLsn = (text: string | null | undefined): bigint | undefined => {
  const match = lsnText.exec(text?.trim() ?? "")
  const [, hi, lo] = match ?? []
  return hi === undefined || lo === undefined ? undefined : (BigInt(`0x${hi}`) << 32n) | BigInt(`0x${lo}`)
}

/** The LSN as PostgreSQL writes it: what `parseLsn` reads back. */
export const formatLsn = (lsn: bigint): string =>
  `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`
