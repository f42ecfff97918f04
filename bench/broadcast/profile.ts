/**
 * Summarizes a V8 `.cpuprofile` (from `node --cpu-prof`): self time by
 * origin (package, Node internals, the service's own files, GC, idle) and the
 * functions with the most self time. `tsx bench/broadcast/profile.ts <file>`
 * prints it; main.ts prints it after a `--cpu-prof` run.
 */
import { readFileSync } from "node:fs"
import { Effect, Schema } from "effect"

const CpuProfile = Schema.Struct({
  nodes: Schema.Array(
    Schema.Struct({
      id: Schema.Number,
      hitCount: Schema.Number.pipe(Schema.withDecodingDefaultType(Effect.succeed(0))),
      callFrame: Schema.Struct({
        functionName: Schema.String,
        url: Schema.String,
        lineNumber: Schema.Number
      })
    })
  ),
  startTime: Schema.Number,
  endTime: Schema.Number,
  samples: Schema.Array(Schema.Number),
  timeDeltas: Schema.Array(Schema.Number)
})

/** Where a function lives: a package, Node itself, a file of the service, or a V8 pseudo-frame. */
export const originOf = (url: string, functionName: string): string => {
  if (url === "") return functionName.startsWith("(") ? functionName : "(native)"
  if (url.startsWith("node:")) {
    const match = /^node:(?:internal\/)?([a-z_]+)/.exec(url)
    return `node:${match?.[1] ?? "?"}`
  }
  const modules = url.lastIndexOf("/node_modules/")
  if (modules >= 0) {
    const rest = url.slice(modules + "/node_modules/".length).split("/")
    const name = rest[0]?.startsWith("@") ? `${rest[0]}/${rest[1] ?? ""}` : (rest[0] ?? "?")
    // Effect's own modules are many: name the file too, that is where the time goes.
    if (name === "effect") return `effect/${(rest[rest.length - 1] ?? "").replace(/\.js$/, "")}`
    return name
  }
  const src = url.indexOf("/src/")
  if (src >= 0) return `service ${url.slice(src + 1)}`
  const bench = url.indexOf("/bench/")
  if (bench >= 0) return `bench ${url.slice(bench + 1)}`
  return url
}

const packageOf = (origin: string) =>
  origin.startsWith("effect/")
    ? "effect"
    : origin.startsWith("node:")
      ? "node (internals)"
      : origin.startsWith("service ")
        ? "service (src/)"
        : origin

export const summarizeProfile = (json: string, top = 30): string => {
  const profile = Schema.decodeUnknownSync(Schema.fromJsonString(CpuProfile))(json)
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const selfMs = new Map<number, number>()
  profile.samples.forEach((id, i) => {
    selfMs.set(id, (selfMs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000)
  })
  const totalMs = (profile.endTime - profile.startTime) / 1000
  let idleMs = 0
  const byPackage = new Map<string, number>()
  const byOrigin = new Map<string, number>()
  const byFunction = new Map<string, number>()
  for (const [id, ms] of selfMs) {
    const node = byId.get(id)
    if (node === undefined) continue
    const { functionName, url, lineNumber } = node.callFrame
    const origin = originOf(url, functionName)
    if (origin === "(idle)") {
      idleMs += ms
      continue
    }
    byPackage.set(packageOf(origin), (byPackage.get(packageOf(origin)) ?? 0) + ms)
    byOrigin.set(origin, (byOrigin.get(origin) ?? 0) + ms)
    const key = `${functionName || "(anonymous)"}  [${origin}${url === "" ? "" : `:${lineNumber + 1}`}]`
    byFunction.set(key, (byFunction.get(key) ?? 0) + ms)
  }
  const busyMs = totalMs - idleMs
  const table = (title: string, entries: Map<string, number>, n: number) =>
    [
      title,
      ...[...entries]
        .sort((a, b) => b[1] - a[1])
        .slice(0, n)
        .map(
          ([name, ms]) =>
            `  ${((ms / busyMs) * 100).toFixed(1).padStart(5)} %  ${ms.toFixed(0).padStart(7)} ms  ${name}`
        )
    ].join("\n")
  return [
    `profile: ${(totalMs / 1000).toFixed(1)} s, busy ${(busyMs / 1000).toFixed(1)} s (${((busyMs / totalMs) * 100).toFixed(0)} % of one core), idle ${(idleMs / 1000).toFixed(1)} s; shares below are of busy time`,
    table("self time by package:", byPackage, 15),
    table("self time by origin:", byOrigin, 25),
    table(`top ${top} functions by self time:`, byFunction, top)
  ].join("\n")
}

if (process.argv[1]?.endsWith("profile.ts") && process.argv[2] !== undefined) {
  console.log(summarizeProfile(readFileSync(process.argv[2], "utf8"), Number(process.argv[3] ?? 30)))
}
