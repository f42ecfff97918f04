import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Option, Redacted, Ref } from "effect"
import { schemaNameOf } from "../../src/api/WorkspaceSlug"
import { runCli } from "../support/cli"
import { startLogicalPostgres } from "../support/logicalPostgres"
import { testServices } from "../support/TestApp"
import { startInstances } from "./support/instances"
import type { Instance } from "./support/instances"
import { waitUntil } from "./support/processes"
import { provisionTenant } from "./support/provision"
import { startRedis } from "./support/redis"

/**
 * Feed positions from the WAL (docs/feed.md, "Order"): three compiled
 * instances of one deployment on a PostgreSQL of the test's own with
 * `wal_level=logical`, `FEED_POSITIONS=wal`; one of them holds the slot and
 * positions every committed row. Writers create and update deals through all
 * of them throughout; the holder (the instance whose `/api/health` says
 * `feed.holder`) is SIGKILLed mid-load, another takes over from the slot's
 * confirmed LSN, and the load goes on. At the end every audit row has a
 * position, the positions are 1..N (none skipped, none given twice), each
 * record's rows come in their commit order (their `seq`), and the ledger
 * verifies (`admin audit verify`: the chain, the counter's head, every
 * record replayed from its timeline).
 */

const scenario = "11-positioner-takeover"
const instanceCount = 3
const writerCount = 12
const slot = "audit_feed"

const say = (line: string) => Effect.sync(() => console.log(`[${scenario}] ${line}`))

interface FeedHealth {
  readonly mode: string
  readonly holder: boolean
}

/** The `feed` part of an instance's `GET /api/health`; undefined when it does not answer. */
const feedHealth = (base: string) =>
  Effect.promise(async (): Promise<FeedHealth | undefined> => {
    try {
      const response = await fetch(`${base}/api/health`, { signal: AbortSignal.timeout(2_000) })
      const body: unknown = await response.json()
      if (typeof body !== "object" || body === null || !("feed" in body)) return undefined
      const feed = body.feed
      if (typeof feed !== "object" || feed === null || !("mode" in feed) || !("holder" in feed)) return undefined
      return { mode: String(feed.mode), holder: feed.holder === true }
    } catch {
      return undefined
    }
  })

/** The instances among `candidates` whose health says they hold the slot. */
const holdersAmong = (candidates: ReadonlyArray<Instance>) =>
  Effect.map(
    Effect.forEach(candidates, (instance) => feedHealth(instance.service.base), { concurrency: "unbounded" }),
    (feeds) => candidates.filter((_, i) => feeds[i]?.holder === true)
  )

interface WriteCounts {
  ok: number
  failed: number
}

/** One HTTP write with the API key; true when it was answered 2xx (an unanswered or refused one is counted, not retried). */
const send = (base: string, apiKey: string, method: "POST" | "PATCH", path: string, values: Record<string, string>) =>
  Effect.promise(async () => {
    try {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({ values }),
        signal: AbortSignal.timeout(15_000)
      })
      const body: unknown = await response.json().catch(() => undefined)
      const id = typeof body === "object" && body !== null && "id" in body ? String(body.id) : undefined
      return { ok: response.ok, id }
    } catch {
      return { ok: false, id: undefined }
    }
  })

describe(`fault 11: the feed positioner's instance killed (SIGKILL) under writes`, () => {
  it.live(
    "three instances in WAL mode, writers throughout, the slot's holder SIGKILLed: another takes over; every row positioned 1..N, in commit order, the ledger verifies",
    () =>
      Effect.gen(function* () {
        const postgres = yield* startLogicalPostgres("app")
        const redis = yield* startRedis
        const tenant = yield* provisionTenant(postgres.url, redis.url)
        const schema = schemaNameOf(tenant.workspace)
        const psql = (sql: string) => postgres.postgres.psql(sql, "app")

        const instances = yield* startInstances(instanceCount, {
          DATABASE_URL: postgres.url,
          REDIS_URL: redis.url,
          FEED_POSITIONS: "wal",
          FEED_SLOT: slot
        })
        const modes = yield* Effect.forEach(instances, (i) => feedHealth(i.service.base))
        expect(modes.map((feed) => feed?.mode)).toEqual(instances.map(() => "wal"))
        yield* waitUntil(
          "one instance holds the slot",
          Effect.map(holdersAmong(instances), (holders) => holders.length === 1),
          "30 seconds"
        )
        const [holder] = yield* holdersAmong(instances)
        if (holder === undefined) return yield* Effect.die(new Error("no holder"))
        const activePid = psql(`SELECT active_pid FROM pg_replication_slots WHERE slot_name = '${slot}' AND active`)
        yield* waitUntil(
          "the holder streams the slot",
          Effect.map(activePid, (pid) => /^\d+$/.test(pid)),
          "30 seconds"
        )
        const slotBefore = yield* activePid

        // Writers: each its own deal, updated again and again (a new title each time), now and then a new deal;
        // writer n sends through the live instances in turn. Writes cut by the kill are not retried: the
        // checks are on what the database holds.
        const live = yield* Ref.make<ReadonlyArray<Instance>>(instances)
        const stopping = yield* Ref.make(false)
        const before: WriteCounts = { ok: 0, failed: 0 }
        const after: WriteCounts = { ok: 0, failed: 0 }
        const killed = yield* Ref.make(false)
        const writer = (n: number) =>
          Effect.gen(function* () {
            let deal: string | undefined
            for (let i = 0; !(yield* Ref.get(stopping)); i++) {
              const targets = yield* Ref.get(live)
              const target = targets[(n + i) % targets.length]
              if (target === undefined) return
              const base = target.service.base
              const create = deal === undefined || i % 5 === 4
              const title = `w${n}.${i}`
              const answer = create
                ? yield* send(base, tenant.apiKey, "POST", "/api/records/crm/deal", { title, stage: "open" })
                : yield* send(base, tenant.apiKey, "PATCH", `/api/records/crm/deal/${deal}`, { title })
              if (create && answer.ok) deal = answer.id
              const counts = (yield* Ref.get(killed)) ? after : before
              if (answer.ok) counts.ok++
              else counts.failed++
            }
          })
        const writers = yield* Effect.forEach(
          Array.from({ length: writerCount }, (_, n) => n),
          (n) => Effect.forkChild(writer(n))
        )

        yield* Effect.sleep("4 seconds")
        const positionedAtKill = Number(
          yield* psql(`SELECT count(*) FROM ${schema}.audit_entries WHERE position IS NOT NULL`)
        )
        yield* Ref.set(
          live,
          instances.filter((i) => i !== holder)
        )
        yield* Ref.set(killed, true)
        const killedAt = Date.now()
        yield* holder.service.signal("SIGKILL")
        yield* holder.service.exited
        yield* say(`SIGKILLed instance ${holder.n} (pid ${holder.service.pid}), the slot's holder`)

        const survivors = instances.filter((i) => i !== holder)
        yield* waitUntil(
          "another instance holds the slot and streams it",
          Effect.gen(function* () {
            const holders = yield* holdersAmong(survivors)
            if (holders.length !== 1) return false
            const active = yield* activePid
            return /^\d+$/.test(active) && active !== slotBefore
          }),
          "30 seconds",
          "20 millis"
        )
        const takeoverMs = Date.now() - killedAt
        // What the survivors' positioners said meanwhile (a term failed and started again, a walsender ended).
        for (const survivor of survivors) {
          const said = (yield* survivor.service.logs)
            .map((line) => String(line.message))
            .filter((message) => message.startsWith("feed positions"))
          yield* say(`instance ${survivor.n}: ${said.join(" | ").slice(0, 600)}`)
        }
        // Positions go on being given after the takeover.
        yield* waitUntil(
          "rows positioned after the takeover",
          Effect.map(
            psql(`SELECT count(*) FROM ${schema}.audit_entries WHERE position IS NOT NULL`),
            (n) => Number(n) > positionedAtKill
          ),
          "30 seconds",
          "20 millis"
        )
        yield* Effect.sleep("4 seconds")
        yield* Ref.set(stopping, true)
        yield* Fiber.joinAll(writers)
        yield* waitUntil(
          "every committed row positioned",
          Effect.map(
            psql(`SELECT count(*) FROM ${schema}.audit_entries WHERE position IS NULL`),
            (n) => Number(n) === 0
          ),
          "30 seconds",
          "50 millis"
        )

        const [rows, positioned, distinct, lowest, highest] = (yield* psql(
          `SELECT count(*), count(position), count(DISTINCT position), coalesce(min(position), 0),
             coalesce(max(position), 0) FROM ${schema}.audit_entries`
        ))
          .split("|")
          .map(Number)
        const outOfOrder = Number(
          yield* psql(`SELECT count(*) FROM (
             SELECT seq, lag(seq) OVER (PARTITION BY business_object, business_object_id ORDER BY position) AS previous
             FROM ${schema}.audit_entries) AS r WHERE previous > seq`)
        )
        const counter = yield* psql(`SELECT position FROM ${schema}.feed_position`)
        yield* say(
          `takeover ${takeoverMs} ms after the SIGKILL; writes 2xx/failed before the kill ${before.ok}/${before.failed}, ` +
            `after ${after.ok}/${after.failed}; ${rows} rows, positions ${lowest}..${highest}, counter ${counter}`
        )
        expect(before.ok).toBeGreaterThan(0)
        expect(after.ok, "writes acknowledged after the kill").toBeGreaterThan(0)
        expect({ positioned, distinct, lowest, highest }).toEqual({
          positioned: rows,
          distinct: rows,
          lowest: 1,
          highest: rows
        })
        expect(counter).toBe(String(rows))
        expect(outOfOrder, "rows of a record whose position order is not their commit (seq) order").toBe(0)

        const verified = yield* runCli("audit", "verify", "--workspace", tenant.workspace).pipe(
          Effect.provide(
            testServices({
              databaseUrl: Option.some(Redacted.make(postgres.url)),
              redisUrl: Option.some(Redacted.make(redis.url))
            })
          )
        )
        expect(Exit.isSuccess(verified.exit), [...verified.stdout, ...verified.stderr].join("\n")).toBe(true)
        expect(verified.stdout.join("\n")).toMatch(/verified\s*$/)
      }).pipe(Effect.scoped),
    240_000
  )
})
