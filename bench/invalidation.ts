/**
 * `npm run bench:invalidation`: the per-instance caches of sessions and
 * grants (docs/security.md, "Caches").
 *
 * Runs three instances of the service in this process (appLayer, real
 * PostgreSQL and Redis, free ports): A and B with the caches, C without
 * (`AUTH_CACHE_TTL_MS=0`), all on one database and one Redis. Measures, in
 * one run:
 *  1. the floor: a bare Redis PUBLISH -> subscriber round trip (two ioredis
 *     connections, one message at a time);
 *  2. invalidation latency across instances, over `--changes=N` (200)
 *     sign-outs and N role changes made over HTTP on A, each after B has
 *     cached what it changes: from the start of A's request until B's bus
 *     hands B the invalidation, and from A's answer until B first refuses
 *     (B asked again and again over HTTP);
 *  3. the request time saved: one authenticated GET of a record, p50/p99, on
 *     A (cached) and on C (reads the session and the grants every time), and
 *     the authentication + grants step alone, in process.
 * Prints every figure with its floor and ratio, and rewrites the
 * "Invalidation" section of BENCHMARKS.md (`--no-report` leaves it alone).
 *
 * Database: BENCH_DATABASE_URL, else TEST_DATABASE_URL, else
 * postgres://postgres@127.0.0.1:5432/test; Redis: BENCH_REDIS_URL, else
 * redis://127.0.0.1:6379.
 */
import { HttpServer } from "effect/http"
import { SqlClient } from "effect/sql"
import { Duration, Effect, Fiber, Layer, ManagedRuntime, Option, PubSub, Redacted, References } from "effect"
import { Redis } from "ioredis"
import { randomBytes } from "node:crypto"
import { cpus, loadavg } from "node:os"
import type { Principal } from "../src/api/Principal"
import { appLayer } from "../src/app/AppLayer"
import { Authentication } from "../src/auth/Authentication"
import { Members } from "../src/auth/Members"
import { Roles } from "../src/auth/Roles"
import { Sessions } from "../src/auth/Sessions"
import { hashToken } from "../src/auth/Tokens"
import { Users } from "../src/auth/Users"
import { BroadcastBus } from "../src/broadcast/BroadcastBus"
import { Caches } from "../src/cache/Caches"
import type { CacheInvalidation } from "../src/broadcast/CacheInvalidation"
import { AppConfig, redisPrefixOf } from "../src/config/AppConfig"
import { platformSchema } from "../src/tenancy/migrations/platform"
import { Workspaces } from "../src/tenancy/Workspaces"
import { writeBenchmarkSection } from "./benchmarksFile"

const databaseUrl =
  process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"
const redisUrl = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379"
const argv = process.argv.slice(2)
const changes = Number(argv.find((a) => a.startsWith("--changes="))?.slice("--changes=".length) ?? "200")
const writesReport = !argv.includes("--no-report")
const floorSamples = 1_000
const requests = { warmUp: 300, measured: 2_000 }
/** The bound the issue sets: an invalidation reaches every instance within it. */
const boundMs = 1_000

const log = (line: string) => console.log(`[bench:invalidation] ${line}`)

const instance = (cacheTtlMs: number) =>
  appLayer(
    AppConfig.make({
      databaseUrl: Option.some(Redacted.make(databaseUrl)),
      redisUrl: Option.some(Redacted.make(redisUrl)),
      host: "127.0.0.1",
      port: 0,
      authCacheTtl: Duration.millis(cacheTtlMs),
      queuePrefix: `bench-invalidation-${randomBytes(4).toString("hex")}`
    })
  ).pipe(Layer.provideMerge(Layer.succeed(References.MinimumLogLevel, "Error")))

const baseOf = Effect.gen(function* () {
  const { address } = yield* HttpServer.HttpServer
  return address._tag === "UnixPathAddress" ? "" : `http://127.0.0.1:${address.port}`
})

// ---------------------------------------------------------------- statistics

interface Summary {
  readonly n: number
  readonly p50: number
  readonly p99: number
  readonly max: number
  readonly mean: number
}

const summarize = (samples: ReadonlyArray<number>): Summary => {
  const sorted = [...samples].sort((a, b) => a - b)
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN
  return {
    n: sorted.length,
    p50: at(0.5),
    p99: at(0.99),
    max: sorted.at(-1) ?? Number.NaN,
    mean: sorted.reduce((sum, x) => sum + x, 0) / Math.max(1, sorted.length)
  }
}

const ms = (x: number) => (x >= 10 ? x.toFixed(1) : x >= 1 ? x.toFixed(2) : x.toFixed(3))
const line = (s: Summary) => `p50 ${ms(s.p50)} ms, p99 ${ms(s.p99)} ms, max ${ms(s.max)} ms (n=${s.n})`
const ratio = (a: number, b: number) => `${(a / b).toFixed(a / b < 0.1 ? 3 : a / b < 10 ? 2 : 0)}x`

// ---------------------------------------------------------------- the floor

/** One message at a time through Redis: PUBLISH on one connection, received on another. */
const redisFloor = async (prefix: string) => {
  const publisher = new Redis(redisUrl)
  const subscriber = new Redis(redisUrl)
  const channel = `${prefix}bench:floor:${randomBytes(4).toString("hex")}`
  try {
    await subscriber.subscribe(channel)
    let received: (() => void) | undefined
    subscriber.on("message", () => received?.())
    const samples: Array<number> = []
    for (let i = 0; i < floorSamples; i++) {
      const arrived = new Promise<void>((done) => {
        received = done
      })
      const start = performance.now()
      await publisher.publish(channel, String(i))
      await arrived
      samples.push(performance.now() - start)
    }
    return summarize(samples.slice(50))
  } finally {
    publisher.disconnect()
    subscriber.disconnect()
  }
}

// ---------------------------------------------------------------- HTTP

const get = async (url: string, headers: Record<string, string>) => {
  const response = await fetch(url, { headers })
  await response.arrayBuffer()
  return response.status
}

const send = async (url: string, method: string, cookie: string, json?: unknown) => {
  const headers: Record<string, string> = { cookie, origin: new URL(url).origin }
  if (json !== undefined) headers["content-type"] = "application/json"
  const response = await fetch(url, { method, headers, body: json === undefined ? undefined : JSON.stringify(json) })
  await response.arrayBuffer()
  if (response.status >= 300) throw new Error(`${method} ${url}: ${response.status}`)
}

/** Asks `url` until it answers `status`: the time from `since` until that answer arrived, and the answers before it. */
const untilStatus = async (url: string, headers: Record<string, string>, status: number, since: number) => {
  const deadline = since + 10_000
  for (let stale = 0; ; stale++) {
    const seen = await get(url, headers)
    const now = performance.now()
    if (seen === status) return { ms: now - since, stale }
    if (now > deadline) throw new Error(`${url}: still ${seen} after 10 s`)
  }
}

// ---------------------------------------------------------------- set-up

const setUp = Effect.gen(function* () {
  const suffix = randomBytes(4).toString("hex")
  const workspace = yield* (yield* Workspaces).create(`bench-i-${suffix}`)
  const users = yield* Users
  const roles = yield* Roles
  const members = yield* Members
  const sessions = yield* Sessions
  yield* roles.grant(workspace, "deal-reader", "crm/deal", "read")
  yield* roles.grant(workspace, "company-reader", "crm/company", "read")
  const person = (name: string) =>
    users.create({ email: `bench-i-${name}-${suffix}@example.com`, name, password: randomBytes(12).toString("hex") })
  const admin = yield* person("admin")
  const reader = yield* person("reader")
  yield* members.add(workspace, admin.id, "admin")
  yield* members.add(workspace, reader.id, "deal-reader")
  const session = (userId: string) => sessions.start(userId, workspace.id, Duration.hours(1))
  return {
    workspace,
    admin,
    reader,
    adminCookie: `session=${yield* session(admin.id)}`,
    readerCookie: `session=${yield* session(reader.id)}`,
    newSession: (userId: string) => Effect.map(session(userId), (token) => `session=${token}`)
  }
}).pipe(Effect.provide(Sessions.layer))

type Data = Effect.Success<typeof setUp>

const tearDown = (data: Data) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* (yield* Workspaces).drop(data.workspace)
    yield* sql`DELETE FROM ${sql(`${platformSchema}.users`)} WHERE id IN (${data.admin.id}, ${data.reader.id})`.pipe(
      Effect.orDie
    )
  })

// ---------------------------------------------------------------- main

const loadAtStart = loadavg()[0] ?? 0

const main = async () => {
  const a = ManagedRuntime.make(instance(60_000))
  const b = ManagedRuntime.make(instance(60_000))
  const c = ManagedRuntime.make(instance(0))
  const prefix = await a.runPromise(Effect.map(AppConfig, redisPrefixOf))
  const data = await a.runPromise(setUp)
  const [baseA, baseB, baseC] = await Promise.all([a.runPromise(baseOf), b.runPromise(baseOf), c.runPromise(baseOf)])
  // B's bus hands every invalidation to B's caches; the bench listens on the same bus.
  const arrivals: Array<{ readonly invalidation: CacheInvalidation; readonly at: number }> = []
  const listener = await b.runPromise(
    Effect.forkDetach(
      Effect.scoped(
        Effect.gen(function* () {
          const subscription = yield* (yield* BroadcastBus).invalidations
          for (;;) {
            const invalidation = yield* PubSub.take(subscription)
            arrivals.push({ invalidation, at: performance.now() })
          }
        })
      )
    )
  )
  const arrivalOf = async (matches: (invalidation: CacheInvalidation) => boolean, after: number) => {
    const deadline = performance.now() + 10_000
    for (;;) {
      const found = arrivals.find((arrival) => arrival.at >= after && matches(arrival.invalidation))
      if (found !== undefined) return found.at
      if (performance.now() > deadline) throw new Error("an invalidation never reached B")
      await new Promise((done) => setImmediate(done))
    }
  }

  try {
    log(`floor: ${floorSamples} Redis PUBLISH -> subscriber round trips`)
    const floor = await redisFloor(prefix)
    log(`floor ${line(floor)}`)

    // Sign-outs: a session B has cached, signed out on A.
    const signOut = { toB: [] as Array<number>, refused: [] as Array<number>, stale: 0 }
    for (let i = 0; i < changes; i++) {
      const cookie = await a.runPromise(data.newSession(data.reader.id))
      const tokenHash = hashToken(cookie.slice("session=".length))
      if ((await get(`${baseB}/api/auth/me`, { cookie })) !== 200) throw new Error("B refused a live session")
      const start = performance.now()
      await send(`${baseA}/api/auth/logout`, "POST", cookie)
      const answered = performance.now()
      const refused = untilStatus(`${baseB}/api/auth/me`, { cookie }, 401, answered)
      signOut.toB.push((await arrivalOf((inv) => inv._tag === "Session" && inv.tokenHash === tokenHash, start)) - start)
      const seen = await refused
      signOut.refused.push(seen.ms)
      signOut.stale += seen.stale
    }

    // Role changes: the reader's role toggles between one that reads deals and one that does not.
    const record = await a.runPromise(
      Effect.gen(function* () {
        const response = yield* Effect.promise(() =>
          fetch(`${baseA}/api/records/crm/deal`, {
            method: "POST",
            headers: { cookie: data.adminCookie, origin: baseA, "content-type": "application/json" },
            body: JSON.stringify({ values: { title: "Benched" } })
          }).then((r) => r.json())
        )
        return String(response.id)
      })
    )
    const dealUrl = (base: string) => `${base}/api/records/crm/deal/${record}`
    const reader = { cookie: data.readerCookie }
    const roleChange = { toB: [] as Array<number>, refused: [] as Array<number>, stale: 0 }
    for (let i = 0; i < changes; i++) {
      const losing = i % 2 === 0
      const before = losing ? 200 : 403
      if ((await get(dealUrl(baseB), reader)) !== before)
        throw new Error(`B did not answer ${before} before change ${i}`)
      const start = performance.now()
      await send(`${baseA}/api/members/${data.reader.id}/role`, "PUT", data.adminCookie, {
        role: losing ? "company-reader" : "deal-reader"
      })
      const answered = performance.now()
      const after = untilStatus(dealUrl(baseB), reader, losing ? 403 : 200, answered)
      roleChange.toB.push(
        (await arrivalOf((inv) => inv._tag === "Member" && inv.userId === data.reader.id, start)) - start
      )
      const seen = await after
      roleChange.refused.push(seen.ms)
      roleChange.stale += seen.stale
    }
    // The transport alone: `Caches.invalidate` on A (what every change calls after its commit) until B's bus has it.
    const transport: Array<number> = []
    for (let i = 0; i < floorSamples; i++) {
      const tokenHash = `bench-${i}-${randomBytes(4).toString("hex")}`
      const start = performance.now()
      await a.runPromise(Effect.flatMap(Caches, (caches) => caches.invalidate({ _tag: "Session", tokenHash })))
      transport.push((await arrivalOf((inv) => inv._tag === "Session" && inv.tokenHash === tokenHash, start)) - start)
    }
    const bus = summarize(transport.slice(50))
    log(`Caches.invalidate on A -> B's bus has it: ${line(bus)}; floor ${line(floor)}`)

    const toB = summarize([...signOut.toB, ...roleChange.toB])
    const refused = summarize([...signOut.refused, ...roleChange.refused])
    log(`invalidation, start of A's change -> B has it: ${line(toB)}; floor p50 ${ms(floor.p50)} ms`)
    log(`A answered -> B refuses: ${line(refused)}`)
    log(`  sign-outs ${line(summarize(signOut.refused))}; role changes ${line(summarize(roleChange.refused))}`)
    log(`  B answered with the old state after A had answered: ${signOut.stale + roleChange.stale} times`)

    // The request time saved: the same GET on A (cached) and C (no caches), taken in turns so both see the same load.
    const admin = { cookie: data.adminCookie }
    for (let i = 0; i < requests.warmUp; i++) {
      await get(dealUrl(baseA), admin)
      await get(dealUrl(baseC), admin)
    }
    const onA: Array<number> = []
    const onC: Array<number> = []
    for (let i = 0; i < requests.measured; i++) {
      for (const [base, samples] of [
        [baseA, onA],
        [baseC, onC]
      ] as const) {
        const start = performance.now()
        await get(dealUrl(base), admin)
        samples.push(performance.now() - start)
      }
    }
    const cached = summarize(onA)
    const uncached = summarize(onC)
    log(`GET a record, cached: ${line(cached)}; without caches: ${line(uncached)}`)

    // The authentication and grants step alone, in process.
    const authStep = (runtime: typeof a) =>
      runtime.runPromise(
        Effect.gen(function* () {
          const authentication = yield* Authentication
          const roles = yield* Roles
          const token = Redacted.make(data.adminCookie.slice("session=".length))
          const once = Effect.flatMap(authentication.fromSession(token), (principal: Principal) =>
            roles.grantsOf(principal.workspace, principal)
          )
          for (let i = 0; i < requests.warmUp; i++) yield* once
          const samples: Array<number> = []
          for (let i = 0; i < requests.measured; i++) {
            const start = performance.now()
            yield* once
            samples.push(performance.now() - start)
          }
          return summarize(samples)
        }).pipe(Effect.provide(Authentication.layer))
      )
    const authCached = await authStep(a)
    const authUncached = await authStep(c)
    log(`session + grants in process, cached: ${line(authCached)}; without caches: ${line(authUncached)}`)

    const pass = refused.max < boundMs && toB.max < boundMs && bus.max < boundMs
    log(pass ? `PASS: every invalidation within ${boundMs} ms` : `FAIL: an invalidation took ${boundMs} ms or more`)
    if (writesReport)
      writeBenchmarkSection(
        "Invalidation",
        section({ floor, bus, toB, refused, signOut, roleChange, cached, uncached, authCached, authUncached, pass })
      )
    if (!pass) process.exitCode = 1
  } finally {
    await b.runPromise(Fiber.interrupt(listener))
    await a.runPromise(tearDown(data))
    await Promise.all([a.dispose(), b.dispose(), c.dispose()])
  }
}

const section = (r: {
  floor: Summary
  bus: Summary
  toB: Summary
  refused: Summary
  signOut: { refused: Array<number>; stale: number }
  roleChange: { refused: Array<number>; stale: number }
  cached: Summary
  uncached: Summary
  authCached: Summary
  authUncached: Summary
  pass: boolean
}) => `## Invalidation

\`npm run bench:invalidation\` (${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${cpus().length} ×
${cpus()[0]?.model.trim() ?? "unknown CPU"}, load average ${loadAtStart.toFixed(1)} at the start): three instances of the service in one process on one PostgreSQL and
one Redis: A and B with the caches of sessions, grants, API keys and workspaces (docs/security.md, "Caches"), C
without (\`AUTH_CACHE_TTL_MS=0\`). ${changes} sign-outs and ${changes} role changes made over HTTP on A, each after B
had cached what it changes.

| figure | p50 | p99 | max | floor (same run) | p50 ratio |
|---|---|---|---|---|---|
| \`Caches.invalidate\` on A (after a commit) -> B's bus hands B the invalidation | ${ms(r.bus.p50)} ms | ${ms(r.bus.p99)} ms | ${ms(r.bus.max)} ms | Redis PUBLISH -> subscriber: p50 ${ms(r.floor.p50)} ms, p99 ${ms(r.floor.p99)} ms, max ${ms(r.floor.max)} ms | ${ratio(r.bus.p50, r.floor.p50)} |
| start of A's change (the whole HTTP request, its transaction included) -> B's bus hands B the invalidation | ${ms(r.toB.p50)} ms | ${ms(r.toB.p99)} ms | ${ms(r.toB.max)} ms | - | - |
| A answered -> B refuses (asked again and again over HTTP) | ${ms(r.refused.p50)} ms | ${ms(r.refused.p99)} ms | ${ms(r.refused.max)} ms | - | - |
| of which sign-outs | ${ms(summarize(r.signOut.refused).p50)} ms | ${ms(summarize(r.signOut.refused).p99)} ms | ${ms(summarize(r.signOut.refused).max)} ms | | |
| of which role changes | ${ms(summarize(r.roleChange.refused).p50)} ms | ${ms(summarize(r.roleChange.refused).p99)} ms | ${ms(summarize(r.roleChange.refused).max)} ms | | |
| GET one record over HTTP, cached (A) | ${ms(r.cached.p50)} ms | ${ms(r.cached.p99)} ms | ${ms(r.cached.max)} ms | without caches (C): p50 ${ms(r.uncached.p50)} ms, p99 ${ms(r.uncached.p99)} ms | ${ratio(r.cached.p50, r.uncached.p50)} |
| session + grants in process, cached | ${ms(r.authCached.p50)} ms | ${ms(r.authCached.p99)} ms | ${ms(r.authCached.max)} ms | without caches: p50 ${ms(r.authUncached.p50)} ms, p99 ${ms(r.authUncached.p99)} ms | ${ratio(r.authCached.p50, r.authUncached.p50)} |

Bound: every invalidation within ${boundMs} ms of the change: **${r.pass ? "PASS" : "FAIL"}**. "A answered -> B
refuses" is one HTTP round trip at least (B is asked in a loop from the moment A answered); B answered with the
old state after A had answered ${r.signOut.stale + r.roleChange.stale} times in ${2 * changes} changes. The floor and the
first row are taken after ${floorSamples / 20} warm-up samples each (${floorSamples} in all). A cached GET skips two statements (the session with its user,
workspace and membership; the grants): ${ms(r.uncached.p50 - r.cached.p50)} ms of the p50.
`

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
