/**
 * Where a series' CPU went, by role: this Node process (`process.cpuUsage`)
 * and each process of a PostgreSQL the bench started (its postmaster's
 * children, read from /proc), told apart by `pg_stat_activity`
 * (`backend_type`, `application_name`). Read at a series' start and end only:
 * nothing samples while the series runs. A process that starts and ends
 * inside a series (a short autovacuum worker) is missed; one that starts
 * inside it counts from zero. Linux only: elsewhere every figure is empty.
 */
import { readdirSync, readFileSync } from "node:fs"
import type pg from "pg"

/** CPU milliseconds by role. */
export type CpuByRole = ReadonlyMap<string, number>

const ticksPerSecond = 100

/** utime + stime in ticks and the parent's pid, from /proc/<pid>/stat; none when the process is gone. */
const procStat = (pid: number): { readonly ticks: number; readonly ppid: number } | undefined => {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "latin1")
    // The command may hold spaces and parentheses: the fields start after the last ")".
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ")
    return { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) }
  } catch {
    return undefined
  }
}

const childrenOf = (parent: number): ReadonlyArray<number> => {
  try {
    return readdirSync("/proc")
      .filter((name) => /^\d+$/.test(name))
      .map(Number)
      .filter((pid) => procStat(pid)?.ppid === parent)
  } catch {
    return []
  }
}

/**
 * A reader of CPU by role. `roleOf` names a backend from its
 * `pg_stat_activity` row; processes it does not list (the postmaster's
 * helpers) are "PostgreSQL's own".
 */
export const processCpu = async (
  pool: pg.Pool,
  roleOf: (backend: { readonly backendType: string; readonly applicationName: string }) => string
) => {
  const { rows } = await pool.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")
  const postmaster = procStat(rows[0]?.pid ?? 0)?.ppid ?? 0
  const roles = new Map<number, string>()
  const read = async (): Promise<ReadonlyMap<number, number>> => {
    const activity = await pool.query<{ pid: number; backend_type: string; application_name: string }>(
      "SELECT pid, backend_type, application_name FROM pg_stat_activity"
    )
    for (const row of activity.rows)
      roles.set(row.pid, roleOf({ backendType: row.backend_type, applicationName: row.application_name }))
    const ticks = new Map<number, number>()
    for (const pid of childrenOf(postmaster)) {
      const stat = procStat(pid)
      if (stat !== undefined) ticks.set(pid, stat.ticks)
    }
    return ticks
  }
  /** Starts a measure; its result, called at the series' end, is the CPU each role took meanwhile. */
  const start = async () => {
    const node = process.cpuUsage()
    const before = await read()
    return async (): Promise<CpuByRole> => {
      const after = await read()
      const used = process.cpuUsage(node)
      const byRole = new Map<string, number>([
        ["node (the bench's writers, the service)", (used.user + used.system) / 1000]
      ])
      for (const [pid, ticks] of after) {
        const role = roles.get(pid) ?? "PostgreSQL's own"
        const spent = ((ticks - (before.get(pid) ?? 0)) * 1000) / ticksPerSecond
        byRole.set(role, (byRole.get(role) ?? 0) + spent)
      }
      return byRole
    }
  }
  return { start }
}

/** Several measures as one. */
export const addCpu = (measures: ReadonlyArray<CpuByRole>): CpuByRole => {
  const sum = new Map<string, number>()
  for (const measure of measures) for (const [role, ms] of measure) sum.set(role, (sum.get(role) ?? 0) + ms)
  return sum
}
