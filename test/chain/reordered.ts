/** The same JSON value with every object's keys inserted in another order, chosen by `shift`. */
export const reordered = (value: unknown, shift: number): unknown => {
  if (value === null || typeof value !== "object") return value
  if (Array.isArray(value)) return value.map((element) => reordered(element, shift))
  const entries = Object.entries(value)
  const start = entries.length === 0 ? 0 : shift % entries.length
  const rotated = [...entries.slice(start), ...entries.slice(0, start)]
  if (shift % 2 === 1) rotated.reverse()
  return Object.fromEntries(rotated.map(([key, member]) => [key, reordered(member, shift + 1)]))
}
