/**
 * The single Redis beside the Redis Cluster, from one run: the service's spread load, its floor
 * (the bare server on the same hints from the same Redis) and their ratio, and the Redis round trip
 * alone. Rows for the console and for BENCHMARKS.md.
 */
import type { Percentiles, SavesResult } from "./protocol"
import type { Results } from "./report"

type Row = readonly [label: string, single: string, cluster: string]

const ms = (value: number) => (value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : value.toFixed(0))
const int = (value: number) => Math.round(value).toLocaleString("en-US")
const latency = (p: Percentiles | undefined) =>
  p === undefined || p.count === 0 ? "-" : `${ms(p.p50)} / ${ms(p.p99)} ms`
const ratio = (a: number | undefined, b: number | undefined) =>
  a === undefined || b === undefined || b === 0 ? "-" : `${(a / b).toFixed(2)}×`

/** The CPU of the process that wrote the hints, per delivery that arrived, in µs. */
const cpuPerDelivery = (r: Results, step: SavesResult | undefined) => {
  const cpu = step === undefined ? undefined : r.cpu[step.phase]
  return step === undefined || cpu === undefined || step.deliveriesPerSecond === 0
    ? undefined
    : (cpu.server / 100 / step.deliveriesPerSecond) * 1e6
}

const rows = (r: Results): ReadonlyArray<Row> => {
  const single = { service: r.spread, floor: r.bareSpread, idle: r.floorIdle }
  const cluster = { service: r.cluster?.spread, floor: r.cluster?.bareSpread, idle: r.cluster?.floorIdle }
  const both = (cell: (side: typeof single) => string): Row => ["", cell(single), cell(cluster)]
  const named = (label: string, row: Row): Row => [label, row[1], row[2]]
  const perDelivery = (step: SavesResult | undefined) => {
    const cost = cpuPerDelivery(r, step)
    return cost === undefined ? "-" : `${cost.toFixed(1)} µs`
  }
  const deliveries = (step: SavesResult | undefined) =>
    step === undefined ? "-" : `${int(step.deliveriesPerSecond)}/s, ${int(step.lostDeliveries)} lost`
  const p = (step: SavesResult | undefined) => step?.commitToReceiptMs
  return [
    named(
      "service: deliveries/s arrived",
      both((s) => deliveries(s.service))
    ),
    named(
      "service: commit → receipt p50 / p99",
      both((s) => latency(p(s.service)))
    ),
    named(
      "service: its CPU per delivery",
      both((s) => perDelivery(s.service))
    ),
    named(
      "floor (bare `node:http` server, same hints): deliveries/s",
      both((s) => deliveries(s.floor))
    ),
    named(
      "floor: commit → receipt p50 / p99",
      both((s) => latency(p(s.floor)))
    ),
    named(
      "floor: its CPU per delivery",
      both((s) => perDelivery(s.floor))
    ),
    named(
      "**ratio service / floor**: p50, p99, CPU per delivery",
      both(
        (s) =>
          `${ratio(p(s.service)?.p50, p(s.floor)?.p50)}, ${ratio(p(s.service)?.p99, p(s.floor)?.p99)}, ${ratio(cpuPerDelivery(r, s.service), cpuPerDelivery(r, s.floor))}`
      )
    ),
    named(
      "Redis alone: publish → message p50 / p99, idle",
      both((s) => latency(s.idle))
    ),
    named(
      "Redis alone, during the service's spread",
      both((s) => latency(s.service?.floorUnderLoadMs))
    ),
    named(
      "Redis CPU (every `redis-server`) / whole machine, during the service's spread",
      both((s) => {
        const cpu = s.service === undefined ? undefined : r.cpu[s.service.phase]
        return cpu === undefined ? "-" : `${cpu.redis} % / ${cpu.machineBusy} % of ${r.machine.cores * 100} %`
      })
    ),
    named(
      "other processes' CPU (not the bench's) during the floor's / the service's spread",
      both((s) => {
        const others = (step: SavesResult | undefined) =>
          step === undefined ? "-" : `${r.cpu[step.phase]?.others ?? "?"} %`
        return `${others(s.floor)} / ${others(s.service)}`
      })
    )
  ]
}

/** For the console, one line per row. */
export const sideBySide = (r: Results): ReadonlyArray<string> => [
  "single Redis | Redis Cluster, same run:",
  ...rows(r).map(
    ([label, single, cluster]) => `  ${label.replaceAll("*", "").replaceAll("`", "")}: ${single} | ${cluster}`
  )
]

/** For BENCHMARKS.md; nothing when the run had no cluster pass. */
export const sideBySideMarkdown = (r: Results): ReadonlyArray<string> =>
  r.cluster === undefined
    ? []
    : [
        `### Single Redis beside a Redis Cluster, same run (spread: ${int(r.settings.workspaces * r.settings.streamsPerWorkspace)} streams, ${r.settings.spreadRate} saves/s)`,
        "",
        `The cluster pass runs after the single-Redis phases: a cluster of the bench's own (3 masters, 3 replicas, \`test/support/ownRedisCluster.ts\`, up in ${r.cluster.startSeconds.toFixed(1)} s), a fresh service with \`REDIS_CLUSTER_NODES\` (hints \`SPUBLISH\`ed on 16 partition channels), the bare server \`SSUBSCRIBE\`d to the same 16 channels, the saver publishing through the service's own bus on the cluster; the same spread load, measured the same way. The Redis floor there is \`SPUBLISH\` → \`SSUBSCRIBE\` on a sharded channel.`,
        "",
        "| | single Redis (`REDIS_URL`) | Redis Cluster (`REDIS_CLUSTER_NODES`) |",
        "|---|---|---|",
        ...rows(r).map(([label, single, cluster]) => `| ${label} | ${single} | ${cluster} |`),
        ""
      ]
