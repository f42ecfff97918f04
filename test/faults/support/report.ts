import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import type { Exchange } from "./recorder"
import { resultsDir } from "./service"

export interface Check {
  readonly name: string
  readonly ok: boolean
  readonly detail: string
}

export interface StatusCounts {
  readonly requests: number
  readonly "2xx": number
  readonly "4xx": number
  readonly "503": number
  readonly "other 5xx": number
  readonly network: number
}

export interface ScenarioResult {
  readonly scenario: string
  readonly title: string
  readonly ranAt: string
  readonly durationMs: number
  readonly writes: {
    readonly logical: number
    readonly attempted: number
    readonly acknowledged: number
    readonly refused: number
    readonly unknown: number
  }
  readonly statuses: { readonly writes: StatusCounts; readonly reads: StatusCounts; readonly all: StatusCounts }
  readonly recovery: {
    readonly faultEndsMs: ReadonlyArray<number>
    readonly timesMs: ReadonlyArray<number | null>
    readonly maxMs: number | null
  }
  readonly reader: {
    readonly passes: number
    readonly aborted: number
    readonly missed: number
    readonly duplicates: number
    readonly newestPageReads: number
    /** Rows that showed up below rows already shown: late in commit order. */
    readonly rowsBelowHead: number
  }
  readonly metrics: Record<string, unknown>
  readonly checks: ReadonlyArray<Check>
}

export const countStatuses = (exchanges: ReadonlyArray<Exchange>): StatusCounts => {
  let ok = 0
  let client = 0
  let unavailable = 0
  let server = 0
  let network = 0
  for (const e of exchanges) {
    if (e.status === undefined) network++
    else if (e.status >= 200 && e.status < 300) ok++
    else if (e.status === 503) unavailable++
    else if (e.status >= 500) server++
    else if (e.status >= 400) client++
  }
  return { requests: exchanges.length, "2xx": ok, "4xx": client, "503": unavailable, "other 5xx": server, network }
}

const cell = (value: unknown) => (value === null || value === undefined ? "-" : String(value))

/** One scenario as printed lines: its numbers, then each check. */
export const describeResult = (r: ScenarioResult): string => {
  const w = r.statuses.writes
  const lines = [
    `[${r.scenario}] ${r.title}`,
    `  writes: ${r.writes.logical} logical, ${r.writes.attempted} attempted, ${r.writes.acknowledged} acknowledged, ${r.writes.refused} refused, ${r.writes.unknown} unknown`,
    `  write answers: 2xx ${w["2xx"]}, 4xx ${w["4xx"]}, 503 ${w["503"]}, other 5xx ${w["other 5xx"]}, network errors ${w.network}`,
    `  read answers: 2xx ${r.statuses.reads["2xx"]}, 4xx ${r.statuses.reads["4xx"]}, 503 ${r.statuses.reads["503"]}, other 5xx ${r.statuses.reads["other 5xx"]}, network errors ${r.statuses.reads.network}`,
    `  time to recovery (ms, first 2xx write sent after each fault end): ${r.recovery.timesMs.map(cell).join(", ")} (max ${cell(r.recovery.maxMs)})`,
    `  paging reader: ${r.reader.passes} passes, ${r.reader.aborted} aborted, ${r.reader.missed} rows missed, ${r.reader.duplicates} duplicated; ${r.reader.newestPageReads} newest-page reads, ${r.reader.rowsBelowHead} rows appeared below the head`,
    ...Object.entries(r.metrics).map(([k, v]) => `  ${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`),
    ...r.checks.map((c) => `  ${c.ok ? "PASS" : "FAIL"} ${c.name}: ${c.detail}`)
  ]
  return lines.join("\n")
}

/**
 * Writes test-results/faults/<scenario>.json and rebuilds
 * test-results/faults/summary.md from every scenario's JSON there.
 */
export const writeReport = (result: ScenarioResult) => {
  mkdirSync(resultsDir, { recursive: true })
  writeFileSync(`${resultsDir}/${result.scenario}.json`, JSON.stringify(result, null, 2))
  const all = readdirSync(resultsDir)
    .filter((f) => f.endsWith(".json"))
    .sort((a, b) => a.localeCompare(b, "en", { numeric: true }))
    .map((f) => JSON.parse(readFileSync(`${resultsDir}/${f}`, "utf8")) as ScenarioResult) // written by this function
  const rows = all.map((r) => {
    const w = r.statuses.writes
    const failed = r.checks.filter((c) => !c.ok).length
    return `| ${r.scenario} | ${r.writes.attempted} | ${w["2xx"]} | ${w["4xx"]} | ${w["503"]} | ${w["other 5xx"]} | ${w.network} | ${cell(r.recovery.maxMs)} | ${r.reader.passes}/${r.reader.missed} | ${failed === 0 ? "all pass" : `${failed} failed`} |`
  })
  const details = all.map((r) => ["", `### ${r.scenario}: ${r.title}`, "", "```", describeResult(r), "```"].join("\n"))
  writeFileSync(
    `${resultsDir}/summary.md`,
    [
      "# Fault suite results",
      "",
      "| scenario | writes attempted | 2xx | 4xx | 503 | other 5xx | network errors | recovery max (ms) | reader passes/missed | checks |",
      "|---|---|---|---|---|---|---|---|---|---|",
      ...rows,
      ...details,
      ""
    ].join("\n")
  )
}
