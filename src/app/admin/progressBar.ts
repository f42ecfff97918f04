const width = 30

const grouped = (n: number) => n.toLocaleString("en-US")

/**
 * One line of an export's progress: a bar and `rows / total` when the total
 * is known, the count alone when it is not (a filtered export: counting
 * first would cost as much as the export).
 */
export const progressLine = (rows: number, total: number | undefined, elapsedMs: number): string => {
  const rate = elapsedMs > 0 ? Math.round((rows * 1_000) / elapsedMs) : 0
  const speed = `${grouped(rate)} rows/s`
  if (total === undefined || total <= 0) return `${grouped(rows)} rows  ${speed}`
  const done = Math.min(1, rows / total)
  const filled = Math.round(done * width)
  return `[${"#".repeat(filled)}${".".repeat(width - filled)}] ${grouped(rows)} / ${grouped(total)} rows  ${speed}`
}
