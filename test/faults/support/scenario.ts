import { Effect } from "effect"
import type { Scope } from "effect"
import { startPostgres } from "./postgres"
import type { TestPostgres } from "./postgres"
import { freePort } from "../../support/freePort"
import { provisionTenant } from "./provision"
import type { Tenant } from "./provision"
import { isOk, Recorder, send } from "./recorder"
import type { Exchange } from "./recorder"
import { startRedis } from "./redis"
import type { TestRedis } from "./redis"
import { countStatuses, describeResult, writeReport } from "./report"
import type { Check, ScenarioResult } from "./report"
import { isReady, makeService } from "./service"
import type { ServiceInstance } from "./service"
import { dealPath, headersOf, rowsBelowHead, startTraffic } from "./traffic"
import type { Credential, LogicalWrite, Traffic } from "./traffic"
import { durability, readFinal, replay } from "./verify"
import { waitUntil } from "./processes"

/** Everything a scenario's fault schedule can reach. */
export interface ScenarioContext {
  readonly pg: TestPostgres
  readonly redis: TestRedis
  readonly service: ServiceInstance
  readonly tenant: Tenant
  readonly recorder: Recorder
  /** Session cookies of the admin user, one per sign-in (for streams and cookie writers). */
  readonly cookies: ReadonlyArray<string>
  readonly apiKey: Credential
  /** The shared deals the writers update. */
  readonly records: ReadonlyArray<string>
  readonly traffic: Traffic
  /** Scenario-specific checks and numbers, added by the fault schedule. */
  readonly check: (name: string, ok: boolean, detail: string) => void
  readonly metric: (name: string, value: unknown) => void
  /** Marks the end of one fault (the moment recovery is measured from). */
  readonly faultEnded: () => void
}

export interface ScenarioSpec {
  /** File-name friendly, numbered: `1-backend-kills`. */
  readonly id: string
  readonly title: string
  readonly writers: number
  readonly sharedRecords: number
  readonly createShare: number
  /** Sign-ins to make (cookie writers use the first ones; streams use them all). */
  readonly sessions: number
  /** How many writers (counting from the last) sign with a cookie and Origin instead of the API key. */
  readonly cookieWriters: number
  readonly pageLimit?: number
  /** The scenario stops the service: requests may then get no answer. */
  readonly killsService: boolean
  readonly serviceEnv?: Record<string, string>
  /** Picks the record of an update; gets the shared records. */
  readonly pickRecord?: (records: ReadonlyArray<string>) => (writer: number) => string
  /** Runs while the writers and the reader run: warm-up, the fault, the time after it. */
  readonly fault: (ctx: ScenarioContext) => Effect.Effect<void, Error, Scope.Scope>
  /** The whole scenario's bound, servers stopped included (default 200 s, below the test's 240 s). */
  readonly boundMs?: number
  /** Recovery must come within this many ms of each fault end (default 15 s). */
  readonly recoveryBoundMs?: number
}

/** Sign-in over HTTP; the `session=...` pair for a cookie header. */
const login = (base: string, tenant: Tenant) =>
  Effect.tryPromise({
    try: async () => {
      const response = await fetch(`${base}/api/auth/login`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: base },
        body: JSON.stringify({ workspace: tenant.workspace, email: tenant.email, password: tenant.password }),
        signal: AbortSignal.timeout(20_000)
      })
      const pair = (response.headers.get("set-cookie") ?? "").split(";")[0] ?? ""
      if (response.status !== 200 || !pair.startsWith("session="))
        throw new Error(`sign-in answered ${response.status}: ${await response.text()}`)
      return pair
    },
    catch: (error) => new Error(`sign-in failed: ${String(error)}`)
  })

const createShared = (recorder: Recorder, base: string, credential: Credential, index: number) =>
  Effect.gen(function* () {
    const title = `shared-${index}`
    const response = yield* send(recorder, base, dealPath, {
      kind: "setup",
      method: "POST",
      headers: headersOf(credential),
      json: { values: { title, stage: "open", amount: "100.00", address: { city: "Porto", country: "PT" } } }
    })
    const body = response.body
    if (
      response.status !== 201 ||
      typeof body !== "object" ||
      body === null ||
      !("id" in body) ||
      typeof body.id !== "string"
    ) {
      return yield* Effect.fail(
        new Error(`creating shared deal ${index}: ${String(response.status)} ${JSON.stringify(body)}`)
      )
    }
    const write: LogicalWrite = {
      key: `setup-${index}`,
      kind: "create",
      writer: -1,
      title,
      values: {},
      recordId: body.id,
      attempts: [response],
      acknowledgedAt: response.endedAt,
      outcome: "acknowledged"
    }
    return write
  })

const isRead = (e: Exchange) => e.kind === "page" || e.kind === "read"
const isWrite = (e: Exchange) => e.kind === "create" || e.kind === "update"

/**
 * Runs one scenario: its own PostgreSQL and Redis, the service as a child
 * process, a tenant made with the admin CLI, writers and a paging reader
 * during the scenario's fault; then reads everything back and checks it.
 * Writes the numbers to test-results/faults/ and returns the result; the
 * caller asserts that every check passed.
 */
export const runScenario = (spec: ScenarioSpec) =>
  Effect.scoped(
    Effect.gen(function* () {
      const began = Date.now()
      const pg = yield* startPostgres(["app"])
      const redis = yield* startRedis
      const tenant = yield* provisionTenant(pg.url("app"), redis.url)
      const port = yield* freePort
      const service = yield* makeService({
        name: spec.id,
        port,
        databaseUrl: pg.url("app"),
        redisUrl: redis.url,
        env: spec.serviceEnv
      })
      const startupMs = yield* service.start
      const base = service.base
      const recorder = new Recorder()
      const apiKey: Credential = { kind: "apiKey", key: tenant.apiKey }
      const cookies = yield* Effect.forEach(Array.from({ length: spec.sessions }), () => login(base, tenant))
      const setup = yield* Effect.forEach(
        Array.from({ length: spec.sharedRecords }, (_, i) => i),
        (i) => createShared(recorder, base, apiKey, i)
      )
      const records = setup.map((w) => w.recordId ?? "")
      const writerCredentials: Array<Credential> = Array.from({ length: spec.writers }, (_, i) => {
        const cookie = cookies[i % Math.max(1, cookies.length)]
        return i >= spec.writers - spec.cookieWriters && cookie !== undefined
          ? { kind: "cookie", cookie, origin: base }
          : apiKey
      })
      const traffic = yield* startTraffic({
        base,
        recorder,
        credentials: writerCredentials,
        writers: spec.writers,
        records,
        pickRecord: spec.pickRecord?.(records),
        createShare: spec.createShare,
        pageLimit: spec.pageLimit ?? 10
      })
      traffic.writes.push(...setup)

      const checks: Array<Check> = []
      const metrics: Record<string, unknown> = { "service start-up (ms)": startupMs }
      const faultEnds: Array<number> = []
      const check = (name: string, ok: boolean, detail: string) => void checks.push({ name, ok, detail })
      const ctx: ScenarioContext = {
        pg,
        redis,
        service,
        tenant,
        recorder,
        cookies,
        apiKey,
        records,
        traffic,
        check,
        metric: (name, value) => {
          metrics[name] = value
        },
        faultEnded: () => void faultEnds.push(recorder.now())
      }
      const faultResult = yield* spec.fault(ctx).pipe(Effect.result)
      if (faultResult._tag === "Failure") check("the fault schedule ran", false, faultResult.failure.message)
      yield* traffic.stop

      // Read back through the service, once it is ready again.
      yield* waitUntil(`${spec.id}: the service is ready for the read-back`, isReady(base), "60 seconds", "200 millis")
      const createdIds = traffic.writes
        .filter((w) => w.kind === "create" && w.outcome === "acknowledged" && w.recordId !== undefined)
        .map((w) => w.recordId ?? "")
      const finals = yield* Effect.forEach(
        [...new Set([...records, ...createdIds])],
        (id) => readFinal(recorder, base, apiKey, id),
        {
          concurrency: 4
        }
      )
      const replays = finals.map(replay)
      const durable = durability(traffic.writes, finals, replays)
      const doubledCreates = yield* pg.psql(
        `SELECT count(*) FROM (SELECT values->>'title' FROM ws_${tenant.workspace}.records WHERE business_object = 'crm/deal' GROUP BY 1 HAVING count(*) > 1) AS d`,
        "app"
      )

      // The numbers.
      const exchanges = recorder.exchanges
      const writeExchanges = exchanges.filter(isWrite)
      const recoveryBound = spec.recoveryBoundMs ?? 15_000
      const recoveries = faultEnds.map((end) => {
        const first = writeExchanges
          .filter((e) => e.startedAt >= end && isOk(e))
          .sort((a, b) => a.endedAt - b.endedAt)[0]
        return first === undefined ? null : Math.round(first.endedAt - end)
      })
      const logical = traffic.writes.filter((w) => w.writer >= 0)
      const passes = traffic.passes
      const missed = passes.reduce((n, p) => n + p.missed.length, 0)
      const duplicates = passes.reduce((n, p) => n + p.duplicates.length, 0)
      const all = countStatuses(exchanges)
      const without503RetryAfter = exchanges.filter(
        (e) => e.status === 503 && e.kind !== "probe" && (e.retryAfter === null || e.retryAfter === "")
      ).length
      const otherServerErrors = exchanges.filter((e) => e.status !== undefined && e.status >= 500 && e.status !== 503)

      check(
        "no 500 (or other 5xx than 503) answered",
        otherServerErrors.length === 0,
        `${otherServerErrors.length} of ${all.requests} requests${
          otherServerErrors.length > 0
            ? `, e.g. ${otherServerErrors
                .slice(0, 3)
                .map(
                  (e) => `${e.method} ${e.path.split("?")[0]} -> ${e.status} ${JSON.stringify(e.body).slice(0, 120)}`
                )
                .join("; ")}`
            : ""
        }`
      )
      check(
        "every 503 carries Retry-After",
        without503RetryAfter === 0,
        `${without503RetryAfter} of ${all["503"]} 503 answers without it`
      )
      if (!spec.killsService) {
        const unanswered = exchanges.filter((e) => e.status === undefined)
        check(
          "every request answered (the service is never stopped here)",
          unanswered.length === 0,
          `${unanswered.length} of ${all.requests} got no HTTP answer${
            unanswered.length > 0
              ? `, e.g. ${unanswered
                  .slice(0, 2)
                  .map((e) => `${e.method} ${e.path.split("?")[0]}: ${e.error ?? ""}`)
                  .join("; ")}`
              : ""
          }`
        )
      }
      const acknowledged = logical.filter((w) => w.outcome === "acknowledged").length
      check("writes were acknowledged", acknowledged > 0, `${acknowledged} of ${logical.length} logical writes`)
      check(
        "every acknowledged write is durable (its audit row exists)",
        durable.lost.length === 0 && durable.missingRecords.length === 0 && durable.notApplied.length === 0,
        `${durable.lost.length} of ${acknowledged} acknowledged writes have no audit row${durable.lost.length > 0 ? ` (${durable.lost.slice(0, 5).join(", ")})` : ""}; ${durable.missingRecords.length} acknowledged creates have no record; ${durable.notApplied.length} rows do not leave the values their write sent${durable.notApplied.length > 0 ? ` (${durable.notApplied.slice(0, 5).join(", ")})` : ""}`
      )
      check(
        "nothing committed twice",
        durable.doubled.length === 0 && doubledCreates === "0",
        `${durable.doubled.length} writes have two or more audit rows${durable.doubled.length > 0 ? ` (${durable.doubled.slice(0, 5).join(", ")})` : ""}; ${doubledCreates} deal titles exist on two or more records`
      )
      const badReplays = replays.filter((r) => r.problems.length > 0)
      check(
        "every timeline replays to its record (each update's from = the state before it)",
        badReplays.length === 0,
        `${badReplays.length} of ${replays.length} timelines do not; ${replays.reduce((n, r) => n + r.brokenLinks, 0)} updates with a wrong from${badReplays.length > 0 ? `; e.g. ${badReplays[0]?.problems.slice(0, 2).join("; ")}` : ""}`
      )
      check(
        "the paging reader missed nothing",
        passes.length > 0 && missed === 0 && duplicates === 0,
        `${passes.length} complete passes; ${missed} rows committed before a pass were missing from it (in ${passes.filter((p) => p.missed.length > 0).length} passes); ${duplicates} rows shown twice in a pass`
      )
      const belowHead = rowsBelowHead(passes)
      const belowNewest = rowsBelowHead(traffic.heads)
      check(
        "new rows appear only at the head (commit order)",
        belowHead.late === 0 && belowNewest.late === 0,
        `${belowNewest.late} rows appeared below rows an earlier newest-page read had already shown (over ${belowNewest.pairs} consecutive reads), ${belowHead.late} below rows of an earlier full pass (over ${belowHead.pairs} pass pairs): a reader polling the newest page never sees them`
      )
      check(
        `service recovers within ${recoveryBound} ms of each fault end`,
        faultEnds.length > 0 && recoveries.every((r) => r !== null && r <= recoveryBound),
        `${faultEnds.length} fault ends; recovery ms: ${recoveries.map((r) => (r === null ? "never" : String(r))).join(", ")}`
      )

      const result: ScenarioResult = {
        scenario: spec.id,
        title: spec.title,
        ranAt: new Date(began).toISOString(),
        durationMs: Date.now() - began,
        writes: {
          logical: logical.length,
          attempted: logical.reduce((n, w) => n + w.attempts.length, 0),
          acknowledged,
          refused: logical.filter((w) => w.outcome === "refused").length,
          unknown: logical.filter((w) => w.outcome !== "acknowledged" && w.outcome !== "refused").length
        },
        statuses: { writes: countStatuses(writeExchanges), reads: countStatuses(exchanges.filter(isRead)), all },
        recovery: {
          faultEndsMs: faultEnds.map(Math.round),
          timesMs: recoveries,
          maxMs:
            recoveries.length > 0 && recoveries.every((r) => r !== null)
              ? Math.max(...recoveries.map((r) => r ?? 0))
              : null
        },
        reader: {
          passes: passes.length,
          aborted: yield* traffic.abortedPasses,
          missed,
          duplicates,
          newestPageReads: traffic.heads.length,
          rowsBelowHead: belowHead.late + belowNewest.late
        },
        metrics,
        checks
      }
      writeReport(result)
      console.log(describeResult(result))
      return result
    })
  ).pipe(
    // Below the test's own timeout, so that the servers are stopped by this scope, not left behind.
    Effect.timeoutOrElse({
      duration: spec.boundMs ?? 200_000,
      orElse: () =>
        Effect.fail(new Error(`[${spec.id}] the scenario did not finish within ${(spec.boundMs ?? 200_000) / 1000} s`))
    })
  )

/** The failed checks of a result as one message: scenario, check, numbers. */
export const failures = (result: ScenarioResult) =>
  result.checks.filter((c) => !c.ok).map((c) => `[${result.scenario}] ${c.name}: ${c.detail}`)
