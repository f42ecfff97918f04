import { readdirSync, readFileSync } from "node:fs"
import type { Percentiles } from "./protocol"

/** Milliseconds on a clock every process of this machine shares (high resolution). */
export const now = (): number => performance.timeOrigin + performance.now()

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** A growable list of numbers, kept in a typed array so a million samples cost 8 MB and no GC churn. */
export class Samples {
  private values: Float64Array
  private size = 0

  constructor(capacity = 1024) {
    this.values = new Float64Array(capacity)
  }

  push(value: number): void {
    if (this.size === this.values.length) {
      const grown = new Float64Array(this.values.length * 2)
      grown.set(this.values)
      this.values = grown
    }
    this.values[this.size++] = value
  }

  get count(): number {
    return this.size
  }

  /** The samples as a plain array (to send over IPC). */
  raw(): Array<number> {
    return Array.from(this.values.subarray(0, this.size))
  }

  /** Takes every sample of `values`. */
  pushAll(values: Iterable<number>): void {
    for (const value of values) this.push(value)
  }

  summary(): Percentiles {
    const sorted = this.values.slice(0, this.size).sort()
    const at = (q: number) =>
      sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0)
    let total = 0
    for (const value of sorted) total += value
    return {
      count: sorted.length,
      p50: at(0.5),
      p90: at(0.9),
      p99: at(0.99),
      p999: at(0.999),
      max: sorted.length === 0 ? 0 : (sorted[sorted.length - 1] ?? 0),
      mean: sorted.length === 0 ? 0 : total / sorted.length
    }
  }
}

export const formatMs = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms < 100 ? ms.toFixed(1) : ms.toFixed(0))

export const describePercentiles = (p: Percentiles) =>
  `p50 ${formatMs(p.p50)} ms, p90 ${formatMs(p.p90)} ms, p99 ${formatMs(p.p99)} ms, p99.9 ${formatMs(p.p999)} ms, max ${formatMs(p.max)} ms (n=${p.count})`

/** VmRSS of a process, in KiB; undefined once it is gone. */
export const rssKiB = (pid: number): number | undefined => {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
    return match?.[1] === undefined ? undefined : Number(match[1])
  } catch {
    return undefined
  }
}

/** utime + stime of a process, in clock ticks (1/100 s on Linux). */
export const cpuTicks = (pid: number): number => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    // The command name may contain spaces: fields count from the closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return Number(fields[11]) + Number(fields[12])
  } catch {
    return 0
  }
}

/** Processes whose command name is `comm` (e.g. every PostgreSQL backend). */
export const pidsByComm = (comm: string): ReadonlyArray<number> => {
  const pids: Array<number> = []
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() === comm) pids.push(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return pids
}

/** Busy and total ticks of the whole machine (all cores), from /proc/stat. */
export const machineTicks = (): { busy: number; total: number } => {
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0] ?? ""
  const values = line.trim().split(/\s+/).slice(1).map(Number)
  const total = values.reduce((a, b) => a + b, 0)
  const idle = (values[3] ?? 0) + (values[4] ?? 0)
  return { busy: total - idle, total }
}

export const ticksPerSecond = 100
