/**
 * Summarizes a `.cpuprofile` of the compiled service (or of a tsx run) with
 * each frame mapped back through the bundle's source map to its source file
 * (src/..., effect/..., @effect/platform/..., pg/...): self time by source
 * file and by function, and inclusive time by source file (a sample counts
 * once for every file on its stack: "time spent in or under code of this
 * file"). `tsx bench/http/profile.ts <file.cpuprofile> [top]` prints it.
 */
import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { originalPositionFor, TraceMap } from "@jridgewell/trace-mapping"

interface Frame {
  readonly functionName: string
  readonly url: string
  readonly lineNumber: number
  readonly columnNumber: number
}
interface ProfileNode {
  readonly id: number
  readonly callFrame: Frame
  readonly children?: ReadonlyArray<number>
}
interface Profile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly startTime: number
  readonly endTime: number
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

const maps = new Map<string, TraceMap | null>()
const mapOf = (url: string): TraceMap | null => {
  if (!url.startsWith("file://")) return null
  const cached = maps.get(url)
  if (cached !== undefined) return cached
  const file = `${fileURLToPath(url)}.map`
  const map = existsSync(file) ? new TraceMap(readFileSync(file, "utf8")) : null
  maps.set(url, map)
  return map
}

/** A source path as a short label: `src/records/Records.ts`, `effect/internal/fiberRuntime.js`, `pg/lib/client.js`. */
const shorten = (source: string): string => {
  const modules = source.lastIndexOf("node_modules/")
  if (modules >= 0) return source.slice(modules + "node_modules/".length).replace(/\/dist\/(esm|cjs)\//, "/")
  const src = source.lastIndexOf("src/")
  return src >= 0 ? source.slice(src) : source
}

const locate = (frame: Frame): { file: string; name: string } => {
  if (frame.url === "")
    return { file: frame.functionName.startsWith("(") ? frame.functionName : "(native)", name: frame.functionName }
  if (frame.url.startsWith("node:")) return { file: frame.url, name: frame.functionName }
  const map = mapOf(frame.url)
  if (map === null) return { file: shorten(frame.url), name: frame.functionName }
  const original = originalPositionFor(map, { line: frame.lineNumber + 1, column: frame.columnNumber })
  const file = original.source === null ? shorten(frame.url) : shorten(original.source)
  return {
    file: `${file}${original.line === null ? "" : `:${original.line}`}`.replace(/:\d+$/, ""),
    name: `${frame.functionName || "(anonymous)"}${original.line === null ? "" : ` :${original.line}`}`
  }
}

/** Groups a source file into a package: `effect`, `@effect/platform`, `pg`, `service src/`, `node`. */
const packageOf = (file: string) => {
  if (file.startsWith("src/")) return `service ${file.split("/").slice(0, 2).join("/")}`
  if (file.startsWith("node:")) return "node internals"
  if (file.startsWith("(")) return file
  const parts = file.split("/")
  return parts[0]?.startsWith("@") ? `${parts[0]}/${parts[1]}` : (parts[0] ?? file)
}

export const summarizeMappedProfile = (json: string, top = 30): string => {
  const profile: Profile = JSON.parse(json)
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  const located = new Map(profile.nodes.map((node) => [node.id, locate(node.callFrame)]))

  const selfByFile = new Map<string, number>()
  const selfByPackage = new Map<string, number>()
  const selfByFunction = new Map<string, number>()
  const inclusiveByFile = new Map<string, number>()
  const inclusiveByPackage = new Map<string, number>()
  let idle = 0
  let total = 0
  const add = (map: Map<string, number>, key: string, ms: number) => map.set(key, (map.get(key) ?? 0) + ms)
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000
    total += ms
    const here = located.get(id)
    if (here === undefined) return
    if (here.file === "(idle)") {
      idle += ms
      return
    }
    add(selfByFile, here.file, ms)
    add(selfByPackage, packageOf(here.file), ms)
    add(selfByFunction, `${here.name}  [${here.file}]`, ms)
    const files = new Set<string>()
    const packages = new Set<string>()
    for (let node: number | undefined = id; node !== undefined; node = parent.get(node)) {
      const at = located.get(node)
      if (at === undefined || byId.get(node) === undefined) continue
      files.add(at.file)
      packages.add(packageOf(at.file))
    }
    for (const file of files) add(inclusiveByFile, file, ms)
    for (const pkg of packages) add(inclusiveByPackage, pkg, ms)
  })
  const busy = total - idle
  const table = (title: string, entries: Map<string, number>, n: number) =>
    [
      title,
      ...[...entries]
        .sort((a, b) => b[1] - a[1])
        .slice(0, n)
        .map(
          ([name, ms]) => `  ${((ms / busy) * 100).toFixed(1).padStart(5)} %  ${ms.toFixed(0).padStart(7)} ms  ${name}`
        )
    ].join("\n")
  return [
    `profile: ${(total / 1000).toFixed(1)} s, busy ${(busy / 1000).toFixed(1)} s; shares are of busy time`,
    table("self time by package:", selfByPackage, 15),
    table("inclusive time by package (a sample counts once per package on its stack):", inclusiveByPackage, 20),
    table("self time by source file:", selfByFile, top),
    table("inclusive time by source file:", inclusiveByFile, top),
    table(`top ${top} functions by self time:`, selfByFunction, top)
  ].join("\n")
}

if (process.argv[1]?.endsWith("profile.ts") && process.argv[2] !== undefined) {
  console.log(summarizeMappedProfile(readFileSync(process.argv[2], "utf8"), Number(process.argv[3] ?? 30)))
}
