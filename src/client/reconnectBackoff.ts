/** The client's own reconnect delays, on top of the server's `retry:` (docs/broadcast.md, "The stream contract"). */
export interface BackoffOptions {
  /** The delay's ceiling after the first failure in a row, in ms. */
  readonly baseMs: number
  /** No delay is ever longer. */
  readonly maxMs: number
}

export const defaultBackoff: BackoffOptions = { baseMs: 2_000, maxMs: 60_000 }

/**
 * How long to wait before reopening a stream after `failures` failures in a
 * row (1 for the first): a ceiling that doubles with each failure up to
 * `maxMs`, and a delay drawn in its upper half (`random` is uniform in
 * [0, 1)). The jitter spreads the tabs that failed together; the upper half
 * keeps the growth (the delay after n + 1 failures is never shorter than the
 * one after n for the same draw).
 */
export const reconnectDelay = (failures: number, random: number, options: BackoffOptions = defaultBackoff): number => {
  const exponent = Math.max(0, Math.floor(failures) - 1)
  const ceiling = Math.min(options.maxMs, options.baseMs * 2 ** Math.min(exponent, 52))
  const unit = Math.min(Math.max(random, 0), 1)
  return Math.round(ceiling / 2 + (ceiling / 2) * unit)
}
