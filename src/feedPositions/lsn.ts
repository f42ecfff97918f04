/** A WAL position as PostgreSQL writes it (`16/B374D848`): two 32-bit halves in hex. */
export type LsnText = string

/** The position as one number; none when the text is not an LSN. */
export const lsnOf = (text: LsnText): bigint | undefined => {
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/u.exec(text)
  if (match === null) return undefined
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`)
}

export const lsnText = (lsn: bigint): LsnText =>
  `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`
