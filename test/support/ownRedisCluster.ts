import { execFile, spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { join } from "node:path"
import { Duration, Effect, Schedule } from "effect"
import type { Scope } from "effect"
import type { ClusterNode as StartupNode } from "../../src/redis/clusterConnection"
import { freePort } from "./freePort"

// A Redis Cluster of the test's own: 3 masters with a replica each, on free loopback ports.

export interface ClusterNode {
  readonly port: number
  readonly pid: number
}

export interface ClusterMember {
  readonly id: string
  readonly port: number
  readonly role: "master" | "replica"
  readonly failed: boolean
  /** The slots a master serves, as ranges `[from, to]`. */
  readonly slots: ReadonlyArray<readonly [number, number]>
}

export interface OwnRedisCluster {
  /** `127.0.0.1:<port>,...`, the form of `REDIS_CLUSTER_NODES`. */
  readonly startupNodes: string
  readonly nodes: ReadonlyArray<ClusterNode>
  /** Runs `redis-cli -p <port> <args>` against one node; its output, trimmed. */
  readonly cli: (port: number, ...args: ReadonlyArray<string>) => Effect.Effect<string, Error>
  /** `CLUSTER NODES`, as a live node sees it. */
  readonly members: Effect.Effect<ReadonlyArray<ClusterMember>, Error>
  /** The live master serving `slot`, as a live node sees it. */
  readonly ownerOf: (slot: number) => Effect.Effect<ClusterMember, Error>
  readonly keySlot: (key: string) => Effect.Effect<number, Error>
  /** SIGKILL, by pid, of the node on `port`; resolves once it is gone. */
  readonly kill: (port: number) => Effect.Effect<void>
  /** Resolves once every live node says `cluster_state:ok` and agrees on who serves every slot. */
  readonly awaitHealthy: (timeout?: Duration.Input) => Effect.Effect<void, Error>
  /** Moves one slot (and its keys) to the master on `toPort`: CLUSTER SETSLOT IMPORTING/MIGRATING, MIGRATE, NODE. */
  readonly migrateSlot: (slot: number, toPort: number) => Effect.Effect<void, Error>
}

/** A cluster's startup nodes as `RedisConnection.layerCluster` takes them (`REDIS_CLUSTER_NODES` parsed). */
export const clusterNodesOf = (cluster: OwnRedisCluster): ReadonlyArray<StartupNode> =>
  cluster.startupNodes.split(",").map((address) => {
    const [host = "", port = ""] = address.split(":")
    return { host, port: Number(port) }
  })

const run = (command: string, args: ReadonlyArray<string>, timeoutMs: number) =>
  Effect.callback<string, Error>((resume) => {
    const child = execFile(command, [...args], { timeout: timeoutMs }, (error, stdout, stderr) =>
      resume(
        error
          ? Effect.fail(new Error(`${command} ${args.join(" ")}: ${error.message} ${stderr}`))
          : Effect.succeed(stdout.trim())
      )
    )
    return Effect.sync(() => child.kill("SIGKILL"))
  })

const exited = (child: ChildProcess) =>
  Effect.callback<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    const onExit = () => resume(Effect.void)
    child.once("exit", onExit)
    return Effect.sync(() => child.off("exit", onExit))
  })

const startNode = (dir: string, port: number, busPort: number) =>
  Effect.callback<ChildProcess, Error>((resume) => {
    const child = spawn(
      "redis-server",
      [
        "--port",
        String(port),
        "--cluster-port",
        String(busPort),
        "--bind",
        "127.0.0.1",
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        join(dir, `nodes-${port}.conf`),
        // Failure detection in about 2 s (the default 15 s would make a failover test crawl).
        "--cluster-node-timeout",
        "2000",
        "--dir",
        dir,
        "--save",
        "",
        "--appendonly",
        "no"
      ],
      { stdio: ["ignore", "pipe", "pipe"] }
    )
    let output = ""
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk
      if (output.includes("Ready to accept connections")) resume(Effect.succeed(child))
    })
    child.once("error", (error) => resume(Effect.fail(error)))
    child.once("exit", (code) =>
      resume(Effect.fail(new Error(`redis-server on ${port} exited (${String(code)}): ${output}`)))
    )
    return Effect.sync(() => child.kill("SIGKILL"))
  })

const parseMembers = (text: string): ReadonlyArray<ClusterMember> =>
  text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const [id = "", address = "", flags = "", , , , , , ...slots] = line.trim().split(" ")
      const port = Number(address.split("@")[0]?.split(":")[1])
      return {
        id,
        port,
        role: flags.includes("master") ? "master" : "replica",
        failed: flags.split(",").includes("fail"),
        slots: slots
          .filter((s) => !s.startsWith("["))
          .map((s): readonly [number, number] => {
            const [from, to] = s.split("-").map(Number)
            return [from ?? 0, to ?? from ?? 0]
          })
      }
    })

/**
 * Six redis-server processes (cluster mode, no persistence, node timeout 2 s) joined by
 * `redis-cli --cluster create --cluster-replicas 1`; healthy when this returns. Every node
 * still running when the scope closes is killed by its pid, and the working directory removed.
 */
export const ownRedisCluster: Effect.Effect<OwnRedisCluster, Error, Scope.Scope> = Effect.gen(function* () {
  const dir = yield* Effect.acquireRelease(
    Effect.sync(() => mkdtempSync("/tmp/own-redis-cluster-")),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )
  const children = new Map<number, ChildProcess>()
  yield* Effect.addFinalizer(() =>
    Effect.forEach(
      [...children.values()],
      (child) => Effect.sync(() => child.kill("SIGKILL")).pipe(Effect.andThen(exited(child))),
      { concurrency: "unbounded", discard: true }
    )
  )
  const ports: Array<readonly [number, number]> = []
  const taken = new Set<number>()
  while (ports.length < 6) {
    const port = yield* freePort
    const busPort = yield* freePort
    if (port === busPort || taken.has(port) || taken.has(busPort)) continue
    taken.add(port).add(busPort)
    ports.push([port, busPort])
  }
  yield* Effect.forEach(
    ports,
    ([port, busPort]) =>
      startNode(dir, port, busPort).pipe(
        Effect.timeout("10 seconds"),
        Effect.tap((child) => Effect.sync(() => children.set(port, child)))
      ),
    { concurrency: "unbounded", discard: true }
  )
  const addresses = ports.map(([port]) => `127.0.0.1:${port}`)
  yield* run("redis-cli", ["--cluster", "create", ...addresses, "--cluster-replicas", "1", "--cluster-yes"], 60_000)

  const cli = (port: number, ...args: ReadonlyArray<string>) => run("redis-cli", ["-p", String(port), ...args], 5_000)
  const livePorts = () => [...children.entries()].filter(([, c]) => c.exitCode === null && c.signalCode === null)
  const anyLive = (): Effect.Effect<number, Error> => {
    const live = livePorts()[0]
    return live === undefined ? Effect.fail(new Error("no live cluster node")) : Effect.succeed(live[0])
  }
  // Suspended: the live node is picked at each call (the first one may be the node a test killed).
  const members = Effect.suspend(anyLive).pipe(
    Effect.flatMap((port) => cli(port, "cluster", "nodes")),
    Effect.map(parseMembers)
  )
  const ownerOf = (slot: number) =>
    members.pipe(
      Effect.flatMap((all) => {
        const owner = all.find(
          (m) => m.role === "master" && !m.failed && m.slots.some(([from, to]) => slot >= from && slot <= to)
        )
        return owner === undefined
          ? Effect.fail(new Error(`no live master serves slot ${slot}`))
          : Effect.succeed(owner)
      })
    )

  // Healthy: every live node reports cluster_state:ok and the same owner for every slot range.
  const healthyNow = Effect.gen(function* () {
    const live = livePorts().map(([port]) => port)
    const views = yield* Effect.forEach(live, (port) =>
      Effect.all([cli(port, "cluster", "info"), cli(port, "cluster", "nodes"), cli(port, "info", "replication")])
    )
    // A replica that has not synced yet could not take over from its master.
    const synced = views.every(([, , replication]) =>
      replication.includes("role:slave") ? replication.includes("master_link_status:up") : true
    )
    const assigned = views.map(([, nodes]) =>
      JSON.stringify(
        parseMembers(nodes)
          .filter((m) => m.role === "master" && !m.failed && m.slots.length > 0)
          .map((m) => `${m.port}:${JSON.stringify(m.slots)}`)
          .sort()
      )
    )
    const covered = views.every(([info]) => info.includes("cluster_state:ok"))
    // A killed master is listed (as serving its slots) until its replica is promoted: only live ones count.
    const slots = parseMembers(views[0]?.[1] ?? "")
      .filter((m) => m.role === "master" && !m.failed && live.includes(m.port))
      .flatMap((m) => m.slots)
      .reduce((sum, [from, to]) => sum + to - from + 1, 0)
    return covered && synced && slots === 16_384 && new Set(assigned).size === 1
  }).pipe(Effect.orElseSucceed(() => false))

  const awaitHealthy = (timeout: Duration.Input = "30 seconds") =>
    Effect.repeat(healthyNow, { until: (ok) => ok, schedule: Schedule.spaced("100 millis") }).pipe(
      Effect.timeoutOrElse({
        duration: timeout,
        orElse: () =>
          Effect.fail(
            new Error(`redis cluster not healthy within ${Duration.format(Duration.fromInputUnsafe(timeout))}`)
          )
      }),
      Effect.asVoid
    )

  const kill = (port: number) =>
    Effect.suspend(() => {
      const child = children.get(port)
      return child === undefined
        ? Effect.void
        : Effect.sync(() => child.kill("SIGKILL")).pipe(Effect.andThen(exited(child)))
    })

  const migrateSlot = (slot: number, toPort: number) =>
    Effect.gen(function* () {
      const all = yield* members
      const source = yield* ownerOf(slot)
      const target = all.find((m) => m.port === toPort)
      if (target === undefined || target.role !== "master") return yield* Effect.fail(new Error(`${toPort}: no master`))
      if (source.port === target.port) return
      yield* cli(target.port, "cluster", "setslot", String(slot), "importing", source.id)
      yield* cli(source.port, "cluster", "setslot", String(slot), "migrating", target.id)
      for (;;) {
        const keys = (yield* cli(source.port, "cluster", "getkeysinslot", String(slot), "100"))
          .split("\n")
          .filter((k) => k !== "")
        if (keys.length === 0) break
        yield* cli(source.port, "migrate", "127.0.0.1", String(target.port), "", "0", "5000", "keys", ...keys)
      }
      // As redis-cli --cluster reshard does: the target first, then the source, then every other master.
      yield* cli(target.port, "cluster", "setslot", String(slot), "node", target.id)
      yield* cli(source.port, "cluster", "setslot", String(slot), "node", target.id)
      for (const other of all.filter((m) => m.role === "master" && !m.failed && m !== source && m !== target))
        yield* cli(other.port, "cluster", "setslot", String(slot), "node", target.id)
    })

  yield* awaitHealthy("30 seconds")
  return {
    startupNodes: addresses.join(","),
    nodes: ports.map(([port]) => ({ port, pid: children.get(port)?.pid ?? 0 })),
    cli,
    members,
    ownerOf,
    keySlot: (key: string) =>
      anyLive().pipe(
        Effect.flatMap((port) => cli(port, "cluster", "keyslot", key)),
        Effect.map(Number)
      ),
    kill,
    awaitHealthy,
    migrateSlot
  }
})
