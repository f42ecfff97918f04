/**
 * The order in which an interleaved bench runs its paths in one iteration: a
 * fresh random permutation each time. A fixed rotation keeps every path's
 * neighbours: the path after the service's would always pay for the
 * service's work after its answer (the outbox, the broadcast hand-off,
 * garbage), and two floors compared with each other would not be measured
 * alike.
 */
export const randomOrder = (length: number): Array<number> => {
  const order = Array.from({ length }, (_, i) => i)
  for (let i = length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1))
    const swapped = order[j] ?? j
    order[j] = order[i] ?? i
    order[i] = swapped
  }
  return order
}
