/**
 * `npx tsx bench/broadcast/heapDiff.ts <before.heapsnapshot> <after.heapsnapshot> [per] [top]`:
 * what the heap holds more in `after` than in `before`, by object kind
 * (V8's node type and constructor or name), in count and self size, divided
 * by `per` (the streams opened between the two snapshots, from
 * `npm run bench:broadcast -- --only=rss --heap-snapshots`).
 */
import { readFileSync } from "node:fs"

interface Snapshot {
  readonly snapshot: { readonly meta: { readonly node_fields: Array<string>; readonly node_types: Array<unknown> } }
  readonly nodes: Array<number>
  readonly strings: Array<string>
}

const tally = (path: string) => {
  const parsed = JSON.parse(readFileSync(path, "utf8")) as Snapshot
  const fields = parsed.snapshot.meta.node_fields
  const types = parsed.snapshot.meta.node_types[0] as Array<string>
  const width = fields.length
  const typeAt = fields.indexOf("type")
  const nameAt = fields.indexOf("name")
  const sizeAt = fields.indexOf("self_size")
  const kinds = new Map<string, { count: number; size: number }>()
  let total = 0
  for (let i = 0; i < parsed.nodes.length; i += width) {
    const type = types[parsed.nodes[i + typeAt] ?? 0] ?? "?"
    const rawName = parsed.strings[parsed.nodes[i + nameAt] ?? 0] ?? ""
    // Strings and code are told apart by kind, not by content.
    const name =
      type === "string" || type === "concatenated string" || type === "sliced string" || type === "code"
        ? ""
        : rawName.slice(0, 60)
    const key = `${type}:${name}`
    const size = parsed.nodes[i + sizeAt] ?? 0
    const kind = kinds.get(key) ?? { count: 0, size: 0 }
    kind.count++
    kind.size += size
    kinds.set(key, kind)
    total += size
  }
  return { kinds, total }
}

const [beforePath, afterPath, perArg, topArg] = process.argv.slice(2)
if (beforePath === undefined || afterPath === undefined) {
  console.error("usage: heapDiff.ts <before.heapsnapshot> <after.heapsnapshot> [per] [top]")
  process.exit(2)
}
const per = Number(perArg ?? 1)
const top = Number(topArg ?? 40)
const before = tally(beforePath)
const after = tally(afterPath)
const rows = [...after.kinds].map(([key, kind]) => {
  const was = before.kinds.get(key) ?? { count: 0, size: 0 }
  return { key, count: (kind.count - was.count) / per, size: (kind.size - was.size) / per }
})
rows.sort((a, b) => b.size - a.size)
console.log(`heap: ${((after.total - before.total) / per).toFixed(0)} bytes more per unit (${per} units)`)
console.log("bytes/unit  count/unit  kind")
for (const row of rows.slice(0, top)) {
  console.log(`${row.size.toFixed(0).padStart(10)}  ${row.count.toFixed(2).padStart(10)}  ${row.key}`)
}
