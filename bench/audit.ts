/**
 * Audit benchmarks: `npm run bench:audit`.
 *
 * Measures, in one run, in a workspace it creates on the test database and
 * drops at the end:
 *  1. the commit latency of a single-record update unit with the audit
 *     listener against the same path without it, each beside the raw
 *     node-postgres floor (`--only=commit` stops here, writing nothing);
 *  1a. the ledger's hash chain in that unit (the floor with the service's
 *     chained audit INSERT against the INSERT before the ledger), per row in
 *     Node, and by unit size (bench/ledger.ts; `--only=ledger` stops here,
 *     writing the Ledger section alone);
 *  1b. one read statement through `@effect/sql` against node-postgres
 *     (`--only=statement` stops here);
 *  2. how many INSERT statements reach audit_entries per unit of 1, 10 and
 *     1,000 rows;
 *  3. the latency of timeline page 1 and page 200 (limit 50) of one record
 *     with 1,000,000 rows, through `Timeline.page` (what the endpoint calls),
 *     beside a bare 50-row index range scan as the floor.
 * Prints every result as a line and rewrites the "Audit" and "Ledger"
 * sections of BENCHMARKS.md (other sections are kept).
 *
 * Database: DATABASE_URL, else TEST_DATABASE_URL, else
 * postgres://postgres@127.0.0.1:5432/test. No Redis needed (in-process bus).
 */
import { NodeRuntime } from "@effect/platform-node"
import { SqlClient } from "effect/sql"
import { Duration, Effect, Option, Redacted } from "effect"
import { cpus } from "node:os"
import { decodeCursor } from "../src/audit/Cursor"
import type { CursorPosition } from "../src/audit/Cursor"
import { Timeline } from "../src/audit/Timeline"
import type { Actor } from "../src/api/Actor"
import { withActor } from "../src/context/Frames"
import { field } from "../src/api/Field"
import { crm } from "../src/plugins/crm"
import type { Plugin } from "../src/plugins/Plugin"
import { PluginRecords } from "../src/plugins/PluginRecords"
import { PluginRegistry } from "../src/plugins/PluginRegistry"
import { Records } from "../src/records/Records"
import { migrateSchema } from "../src/tenancy/Migrations"
import { platformMigrations, platformSchema } from "../src/tenancy/migrations/platform"
import type { Workspace } from "../src/api/Workspace"
import { Workspaces } from "../src/tenancy/Workspaces"
import { UnitOfWork } from "../src/unitOfWork/UnitOfWork"
import { benchServices } from "./benchServices"
import { benchmarksFile, writeBenchmarkSection } from "./benchmarksFile"
import { pg, prepared } from "./http/pg"
import { statementsOf, timelinePage, updateUnit } from "./http/statements"
import type { AuditInsert, AuditTiming } from "./http/statements"
import { chainCost, chainInUnit, chainShareTarget, ledgerSection, percent } from "./ledger"
import { randomOrder } from "./order"

// ---------------------------------------------------------------- settings

const databaseUrl =
  process.env.DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"

const commit = { warmUp: 300, iterations: Number(process.env.UNITS ?? 2_000) }
const unitSizes = [1, 10, 1_000] as const
const statement = { iterations: 5_000 }
const timeline = {
  rows: 1_000_000,
  chunk: 100_000,
  otherRecords: 1_000,
  otherRows: 100_000,
  limit: 50,
  page: 200,
  /** Per measured series: at most this many samples, at least `min`, and stop after `budgetMs` once `min` is reached. */
  /** Rounds of the four interleaved page queries: at most `max`, at least `min`, and none after `budgetMs` once `min` is reached. */
  samples: { max: 1_000, min: 50, budgetMs: 30_000 },
  /** Walking the cursors to page 200 stops after this long (see the printed note if it does). */
  walkBudgetMs: 45_000
}
/** Issue 17: a unit at most 1.5x its raw-driver floor; page 200 within 1.1x of page 1 (the HTTP rows: bench:http). */
const targets = { commitRatio: 1.5, pageRatio: 1.1 }

// ---------------------------------------------------------------- the bench plugin

/**
 * `bench/item`: no listeners, so an update's event reaches the audit
 * listener only. The action `spawn` creates `n` items in its unit (like the
 * test plugin's `spawn`).
 */
const benchPlugin: Plugin = {
  namespace: "bench",
  label: "Bench",
  businessObjects: {
    item: {
      label: "Item",
      title: "name",
      fields: { name: field.string, n: field.number },
      actions: {
        spawn: {
          label: "Spawn items",
          description: "Create `n` items in one unit",
          run: (target) =>
            Effect.gen(function* () {
              const records = yield* PluginRecords
              const count = typeof target.values.n === "number" ? target.values.n : 0
              for (let i = 0; i < count; i++) yield* records.create("bench/item", { name: `spawned ${i}` })
              return target
            })
        }
      }
    }
  }
}
const item = "bench/item"
const actor: Actor = { kind: "system", name: "seeder:bench" }

// crm: the ledger rows hash real crm/deal rows (bench/ledger.ts).
const BenchLive = benchServices(PluginRegistry.layerWith([benchPlugin, crm]), {
  databaseUrl: Option.some(Redacted.make(databaseUrl)),
  databasePoolSize: 4,
  // Seeding a million audit rows and VACUUM ANALYZE run past the service's 10 s statement budget.
  databaseStatementTimeout: Duration.minutes(30),
  redisUrl: Option.none()
})

// ---------------------------------------------------------------- measuring

interface Summary {
  readonly n: number
  readonly p50: number
  readonly p90: number
  readonly p99: number
  readonly mean: number
  /** CPU of this process per sample, µs (set by `sample`; 0 where not measured). */
  readonly cpuUs: number
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] ?? Number.NaN

const summarize = (times: ReadonlyArray<number>): Summary => {
  const sorted = [...times].sort((a, b) => a - b)
  return {
    n: sorted.length,
    p50: percentile(sorted, 0.5),
    p90: percentile(sorted, 0.9),
    p99: percentile(sorted, 0.99),
    cpuUs: 0,
    mean: sorted.reduce((sum, t) => sum + t, 0) / Math.max(1, sorted.length)
  }
}

/** Milliseconds the effect took, and its value. */
const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => {
    const start = performance.now()
    return Effect.map(effect, (value) => [performance.now() - start, value] as const)
  })

/** The effects in turn (the order rotates), `max` rounds, or fewer once `budgetMs` has passed (at least `min`). */
const interleavedSamples = (
  effects: ReadonlyArray<Effect.Effect<unknown>>,
  limits: { readonly max: number; readonly min: number; readonly budgetMs: number }
) =>
  Effect.gen(function* () {
    const times = effects.map((): Array<number> => [])
    const cpu = effects.map(() => 0)
    const start = performance.now()
    for (
      let round = 0;
      round < limits.max && (round < limits.min || performance.now() - start < limits.budgetMs);
      round++
    ) {
      for (let k = 0; k < effects.length; k++) {
        const index = (round + k) % effects.length
        const effect = effects[index]
        if (effect === undefined) continue
        const before = process.cpuUsage()
        const [elapsed] = yield* timed(effect)
        const used = process.cpuUsage(before)
        times[index]?.push(elapsed)
        cpu[index] = (cpu[index] ?? 0) + used.user + used.system
      }
    }
    return times.map((t, index) => ({ ...summarize(t), cpuUs: (cpu[index] ?? 0) / Math.max(1, t.length) }))
  })

const ms = (value: number) => (value < 10 ? value.toFixed(3) : value.toFixed(1))
const ratio = (value: number) => value.toFixed(3)
const verdict = (ok: boolean) => (ok ? "PASS" : "FAIL")
const int = (value: number) => Math.round(value).toLocaleString("en-US")
const say = (line: string) => Effect.sync(() => console.log(line))
const redactedUrl = (url: string) => url.replace(/\/\/[^@/]*@/, "//")

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null
/** An EXPLAIN (FORMAT JSON) plan as one line, outermost node first: "Limit > Index Scan using ...". */
const planLine = (value: unknown): Array<string> => {
  if (Array.isArray(value)) return value.flatMap(planLine)
  if (!isObject(value)) return []
  const type = value["Node Type"]
  const index = value["Index Name"]
  const here = typeof type === "string" ? [typeof index === "string" ? `${type} using ${index}` : type] : []
  return [...here, ...planLine(value.Plan), ...planLine(value.Plans)]
}

// ---------------------------------------------------------------- 1. commit latency

interface Path {
  readonly name: string
  readonly run: (n: number) => Effect.Effect<unknown>
}

const commitLatency = (workspace: Workspace) =>
  Effect.gen(function* () {
    const units = yield* UnitOfWork
    const records = yield* Records
    const sql = yield* SqlClient.SqlClient
    const inUnit = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      units.run(workspace, effect).pipe(withActor(actor), Effect.orDie)

    const audited = yield* inUnit(records.create(item, { name: "operational", n: 0 }))
    const unaudited = yield* inUnit(records.create(item, { name: "draft", n: 0 }, { draft: true }))
    const rawAudited = yield* inUnit(records.create(item, { name: "raw, operational", n: 0 }))
    const rawUnaudited = yield* inUnit(records.create(item, { name: "raw, draft", n: 0 }, { draft: true }))
    const rawUnchained = yield* inUnit(records.create(item, { name: "raw, operational, no chain", n: 0 }))
    const update = (id: string, n: number) => inUnit(records.update(item, id, { n }))
    // The floor: the same statements on node-postgres, one transaction, nothing around them.
    const pool = yield* Effect.acquireRelease(
      Effect.sync(() => new pg.Pool({ connectionString: databaseUrl, max: 4, application_name: "bench-audit-floor" })),
      (p) => Effect.promise(() => p.end())
    )
    const statements = statementsOf(workspace.schema)
    // The audit INSERT's timings of the two floors with audit, per iteration (paired: same iteration, same machine).
    const ledgerInserts: Array<AuditTiming> = []
    const unchainedInserts: Array<AuditTiming> = []
    let measuring = false
    const raw = (id: string, n: number, audit: AuditInsert, timings?: Array<AuditTiming>) =>
      Effect.promise(() =>
        updateUnit(pool, statements, {
          businessObject: item,
          id,
          patch: { n },
          actor,
          audit,
          onAudit: (timing) => {
            if (measuring) timings?.push(timing)
          }
        })
      )
    const paths: ReadonlyArray<Path> = [
      { name: "service, with audit", run: (n) => update(audited.id, n) },
      { name: "floor, with audit", run: (n) => raw(rawAudited.id, n, "ledger", ledgerInserts) },
      { name: "service, without audit", run: (n) => update(unaudited.id, n) },
      { name: "floor, without audit", run: (n) => raw(rawUnaudited.id, n, "none") },
      { name: "floor, audit without chain", run: (n) => raw(rawUnchained.id, n, "withoutChain", unchainedInserts) }
    ]

    yield* say(
      `[commit] warming up (${commit.warmUp} units each), then ${int(commit.iterations)} interleaved units each`
    )
    const times = paths.map((): Array<number> => [])
    const cpu = paths.map(() => 0)
    for (let i = 1; i <= commit.warmUp + commit.iterations; i++) {
      measuring = i > commit.warmUp
      // A fresh random order every iteration: drift and ordering effects hit every path alike (bench/order.ts).
      for (const index of randomOrder(paths.length)) {
        const path = paths[index]
        if (path === undefined) continue
        const before = process.cpuUsage()
        const [elapsed] = yield* timed(path.run(i))
        const used = process.cpuUsage(before)
        if (i > commit.warmUp) {
          times[index]?.push(elapsed)
          cpu[index] = (cpu[index] ?? 0) + used.user + used.system
        }
      }
    }
    // The premise: the operational records' units wrote one audit row each, the drafts' none.
    const rows = yield* sql<{ readonly id: string; readonly n: string }>`
      SELECT business_object_id AS id, count(*)::text AS n FROM ${sql(workspace.table("audit_entries"))}
      WHERE business_object_id IN (${audited.id}, ${unaudited.id}, ${rawAudited.id}, ${rawUnaudited.id}) GROUP BY business_object_id`
    const auditRows = (id: string) => Number(rows.find((row) => row.id === id)?.n ?? 0)
    const results = paths.map((path, index) => ({
      name: path.name,
      ...summarize(times[index] ?? []),
      cpuUs: (cpu[index] ?? 0) / commit.iterations
    }))
    const [withAudit, floorWithAudit, withoutAudit, floorWithoutAudit, floorWithoutChain] = results
    if (!withAudit || !floorWithAudit || !withoutAudit || !floorWithoutAudit || !floorWithoutChain)
      return yield* Effect.die(new Error("no paths"))
    for (const r of results) {
      yield* say(
        `[commit] ${r.name.padEnd(24)} p50 ${ms(r.p50)} ms, p99 ${ms(r.p99)} ms, mean ${ms(r.mean)} ms, CPU ${int(r.cpuUs)} µs per unit (this process), n=${r.n}`
      )
    }
    const auditRatio = withAudit.p50 / floorWithAudit.p50
    const plainRatio = withoutAudit.p50 / floorWithoutAudit.p50
    yield* say(
      `[commit] ratio service / floor (p50): with audit ${ratio(auditRatio)} (target <= ${targets.commitRatio}: ${verdict(auditRatio <= targets.commitRatio)}), without audit ${ratio(plainRatio)}`
    )
    yield* say(
      `[commit] audit rows written: operational records ${int(auditRows(audited.id))} + ${int(auditRows(rawAudited.id))} (floor), draft records ${auditRows(unaudited.id) + auditRows(rawUnaudited.id)}`
    )
    const chain = chainInUnit({
      ledgerUnits: times[1] ?? [],
      unchainedUnits: times[4] ?? [],
      ledgerInserts,
      unchainedInserts,
      serviceUnitMs: withAudit.p50,
      ledgerCpuUs: floorWithAudit.cpuUs,
      unchainedCpuUs: floorWithoutChain.cpuUs
    })
    yield* say(
      `[commit] the chain in a unit on node-postgres (paired medians): unit +${ms(chain.unitMs)} ms (95 % ${ms(chain.unitIntervalMs[0])} to ${ms(chain.unitIntervalMs[1])}), ` +
        `INSERT +${ms(chain.statementMs)} ms, its parameters +${int(chain.parametersUs)} µs, CPU +${int(chain.cpuUs)} µs; ` +
        `of the service's unit (p50 ${ms(withAudit.p50)} ms): whole unit ${percent(chain.share)}, parts ${percent(chain.partsShare)}, ` +
        `target <= ${percent(chainShareTarget)}: ${verdict(chain.share <= chainShareTarget)} / ${verdict(chain.partsShare <= chainShareTarget)}`
    )
    return {
      withAudit,
      floorWithAudit,
      withoutAudit,
      floorWithoutAudit,
      floorWithoutChain,
      chain,
      auditRatio,
      plainRatio,
      auditedRows: auditRows(audited.id),
      unauditedRows: auditRows(unaudited.id) + auditRows(rawUnaudited.id)
    }
  })

// ---------------------------------------------------------------- 1b. one statement

/**
 * One read statement (a record by id, as `RecordStore.find` reads it) through the service's `SqlClient`
 * (`@effect/sql-pg`: statement compile, name transforms, a span when tracing is on) against the same text and
 * parameters on node-postgres: the per-statement cost of the Effect SQL layer.
 */
const oneStatement = (workspace: Workspace) =>
  Effect.gen(function* () {
    const units = yield* UnitOfWork
    const records = yield* Records
    const sql = yield* SqlClient.SqlClient
    const record = yield* units
      .run(workspace, records.create(item, { name: "read", n: 0 }))
      .pipe(withActor(actor), Effect.orDie)
    const pool = yield* Effect.acquireRelease(
      Effect.sync(
        () => new pg.Pool({ connectionString: databaseUrl, max: 2, application_name: "bench-audit-statement" })
      ),
      (p) => Effect.promise(() => p.end())
    )
    const table = sql(workspace.table("records"))
    const byId = prepared(
      `SELECT id::text AS id, state, version::text AS version FROM ${workspace.schema}.records WHERE business_object = $1 AND id = $2`
    )
    const [service, floor] = yield* interleavedSamples(
      [
        Effect.orDie(
          sql`SELECT id::text AS id, state, version::text AS version FROM ${table} WHERE business_object = ${item} AND id = ${record.id}`
        ),
        Effect.promise(() => pool.query({ ...byId, values: [item, record.id] }))
      ],
      { max: statement.iterations, min: 500, budgetMs: 15_000 }
    )
    if (service === undefined || floor === undefined) return yield* Effect.die(new Error("no samples"))
    yield* say(
      `[statement] service (@effect/sql) p50 ${ms(service.p50)} ms, CPU ${int(service.cpuUs)} µs; floor (node-postgres) p50 ${ms(floor.p50)} ms, CPU ${int(floor.cpuUs)} µs; ratio ${ratio(service.p50 / floor.p50)} (n=${service.n})`
    )
    return { service, floor }
  })

// ---------------------------------------------------------------- 2. statements per unit

const statementsPerUnit = (workspace: Workspace) =>
  Effect.gen(function* () {
    const units = yield* UnitOfWork
    const records = yield* Records
    const sql = yield* SqlClient.SqlClient
    const inUnit = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      units.run(workspace, effect).pipe(withActor(actor), Effect.orDie)
    const schema = workspace.schema
    const counter = sql(workspace.table("bench_audit_inserts"))

    // One counter row per INSERT statement on audit_entries, with the rows it inserted.
    yield* sql`CREATE TABLE ${counter} (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, rows bigint NOT NULL)`
    yield* sql.unsafe(`CREATE FUNCTION ${schema}.bench_count_audit_inserts() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN INSERT INTO ${schema}.bench_audit_inserts (rows) SELECT count(*) FROM inserted; RETURN NULL; END $$`)
    yield* sql.unsafe(`CREATE TRIGGER bench_count_audit_inserts AFTER INSERT ON ${schema}.audit_entries
      REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION ${schema}.bench_count_audit_inserts()`)

    const counted = <A, E, R>(unit: Effect.Effect<A, E, R>) =>
      Effect.gen(function* () {
        const [before] = yield* sql<{
          readonly last: string
        }>`SELECT coalesce(max(id), 0)::text AS last FROM ${counter}`
        const [elapsed] = yield* timed(unit)
        const [after] = yield* sql<{ readonly statements: string; readonly rows: string }>`
          SELECT count(*)::text AS statements, coalesce(sum(rows), 0)::text AS rows FROM ${counter} WHERE id > ${before?.last ?? "0"}::bigint`
        return { statements: Number(after?.statements), rows: Number(after?.rows), elapsed }
      })

    const results: Array<{
      readonly unit: string
      readonly expectedRows: number
      readonly statements: number
      readonly rows: number
      readonly elapsed: number
    }> = []
    const target = yield* inUnit(records.create(item, { name: "update target", n: 0 }))
    const single = yield* counted(inUnit(records.update(item, target.id, { n: 1 })))
    results.push({ unit: "update of one record", expectedRows: 1, ...single })
    for (const size of unitSizes) {
      const spawner = yield* inUnit(records.create(item, { name: `spawner ${size}`, n: size }))
      const spawned = yield* counted(inUnit(records.runAction(item, "spawn", spawner.id)))
      results.push({
        unit: `spawn action creating ${int(size)} record${size === 1 ? "" : "s"}`,
        expectedRows: size,
        ...spawned
      })
    }
    for (const result of results) {
      const ok = result.statements === 1 && result.rows === result.expectedRows
      yield* say(
        `[statements] ${result.unit}: ${int(result.rows)} audit rows in ${result.statements} INSERT statement${result.statements === 1 ? "" : "s"} (unit took ${ms(result.elapsed)} ms; target exactly 1: ${verdict(ok)})`
      )
    }
    yield* sql.unsafe(`DROP TRIGGER bench_count_audit_inserts ON ${schema}.audit_entries`)
    return results
  })

// ---------------------------------------------------------------- 3. timeline pages

const timelinePages = (workspace: Workspace) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const service = yield* Timeline
    const table = sql(workspace.table("audit_entries"))
    const recordId = crypto.randomUUID()

    yield* say(
      `[timeline] inserting ${int(timeline.rows)} audit rows for one ${item} record (${recordId}) with generate_series`
    )
    const started = performance.now()
    for (let from = 1; from <= timeline.rows; from += timeline.chunk) {
      const to = Math.min(timeline.rows, from + timeline.chunk - 1)
      // Four rows per instant (one unit's rows share `at`); the timeline's order is seq (commit order).
      yield* sql`INSERT INTO ${table} (id, at, actor, correlation_id, business_object, business_object_id, operation, changes)
        SELECT gen_random_uuid(), '2026-01-01T00:00:00Z'::timestamptz + (i / 4) * interval '3 microseconds',
          ${JSON.stringify(actor)}::jsonb, gen_random_uuid(), ${item}, ${recordId}, 'updated',
          jsonb_build_object('n', jsonb_build_object('from', i - 1, 'to', i))
        FROM generate_series(${from}::int, ${to}::int) AS i`
      yield* say(
        `[timeline]   ${int(to)} / ${int(timeline.rows)} rows (${((performance.now() - started) / 1000).toFixed(1)} s)`
      )
    }
    yield* sql`INSERT INTO ${table} (id, at, actor, correlation_id, business_object, business_object_id, operation, changes)
      SELECT gen_random_uuid(), '2026-01-01T00:00:00Z'::timestamptz + i * interval '5 microseconds',
        ${JSON.stringify(actor)}::jsonb, gen_random_uuid(), ${item}, 'other-' || (i % ${timeline.otherRecords}::int), 'updated',
        jsonb_build_object('n', jsonb_build_object('from', i - 1, 'to', i))
      FROM generate_series(1, ${timeline.otherRows}::int) AS i`
    yield* sql.unsafe(`VACUUM (ANALYZE) ${workspace.schema}.audit_entries`)
    yield* say(
      `[timeline] plus ${int(timeline.otherRows)} rows over ${int(timeline.otherRecords)} other records; VACUUM ANALYZE done (${((performance.now() - started) / 1000).toFixed(1)} s in all)`
    )

    const page = (after: Option.Option<CursorPosition>) =>
      service.page(workspace, item, recordId, after, timeline.limit)
    /** The rows the page should hold, by the index order (qualified columns: the table's, not text). */
    const expectedIds = (offset: number) =>
      Effect.map(
        sql<{ readonly id: string }>`SELECT id::text AS id FROM ${table} AS e
          WHERE business_object = ${item} AND business_object_id = ${recordId}
          ORDER BY e.seq DESC OFFSET ${offset} LIMIT ${timeline.limit}`,
        (rows) => rows.map((row) => row.id)
      )
    const sameIds = (served: ReadonlyArray<{ readonly id: string }>, expected: ReadonlyArray<string>) =>
      served.length === expected.length && served.every((entry, i) => entry.id === expected[i])

    // Page 1.
    yield* page(Option.none()) // warm-up
    const firstPage = yield* page(Option.none())
    const firstPageCorrect = sameIds(firstPage.entries, yield* expectedIds(0))

    // Walk the cursors, as a client would, to the cursor that opens page 200.
    yield* say(
      `[timeline] walking nextCursor from page 1 to page ${timeline.page} (budget ${timeline.walkBudgetMs / 1000} s)`
    )
    const walkStart = performance.now()
    let position: Option.Option<CursorPosition> = Option.none()
    let reached = 1
    let cursor = firstPage.nextCursor
    while (reached < timeline.page && cursor !== null && performance.now() - walkStart < timeline.walkBudgetMs) {
      position = decodeCursor(cursor)
      if (Option.isNone(position))
        return yield* Effect.die(new Error(`the service made a cursor it cannot read: ${cursor}`))
      reached++
      if (reached < timeline.page) cursor = (yield* page(position)).nextCursor
    }
    const walkMs = performance.now() - walkStart
    let walkNote: string
    if (reached === timeline.page) {
      walkNote = `walked ${timeline.page - 1} cursors in ${(walkMs / 1000).toFixed(1)} s`
    } else {
      // Too slow to walk within the budget: take the cursor the walk would
      // have reached from the index order (the last row of page 199).
      const [last] = yield* sql<{ readonly seq: string }>`
        SELECT e.seq::text AS seq FROM ${table} AS e
        WHERE business_object = ${item} AND business_object_id = ${recordId}
        ORDER BY e.seq DESC OFFSET ${(timeline.page - 1) * timeline.limit - 1} LIMIT 1`
      if (last === undefined) return yield* Effect.die(new Error("no row at the end of page 199"))
      position = Option.some({ seq: last.seq })
      walkNote =
        `the walk reached only page ${reached} in ${(walkMs / 1000).toFixed(1)} s (${ms(walkMs / Math.max(1, reached - 1))} ms a page); ` +
        `the page-${timeline.page} cursor was then taken from the index order (last row of page ${timeline.page - 1})`
    }
    yield* say(`[timeline] ${walkNote}`)
    const pageN = yield* page(position)
    // The plans of the very statements the service runs for these two pages (it asks one row more).
    const explain = (after: Option.Option<CursorPosition>) =>
      Effect.gen(function* () {
        const [text, params] = service.compiledQuery(workspace, item, recordId, after, timeline.limit + 1)
        const rows = yield* sql.unsafe<Record<string, unknown>>(`EXPLAIN (FORMAT JSON) ${text}`, params)
        return planLine(rows.flatMap((row) => Object.values(row))).join(" > ")
      })
    const plan1 = yield* explain(Option.none())
    const plan200 = yield* explain(position)
    yield* say(`[timeline] plan of the service's page-1 query:   ${plan1}`)
    yield* say(`[timeline] plan of the service's page-${timeline.page} query: ${plan200}`)
    const pageNCorrect = sameIds(pageN.entries, yield* expectedIds((timeline.page - 1) * timeline.limit))
    // The floor: the statement the service sends for the page, on node-postgres (the keyset SQL alone).
    const pool = yield* Effect.acquireRelease(
      Effect.sync(() => new pg.Pool({ connectionString: databaseUrl, max: 2, application_name: "bench-audit-floor" })),
      (p) => Effect.promise(() => p.end())
    )
    const statements = statementsOf(workspace.schema)
    const seq = Option.map(position, (p) => p.seq).pipe(Option.getOrElse(() => "0"))
    const floorPage = (afterSeq: string | undefined) =>
      Effect.promise(() =>
        timelinePage(pool, statements, {
          businessObject: item,
          id: recordId,
          limit: timeline.limit,
          ...(afterSeq === undefined ? {} : { afterSeq })
        })
      )
    const [page1, page200, floor1, floor200] = yield* interleavedSamples(
      [page(Option.none()), page(position), floorPage(undefined), floorPage(seq)],
      timeline.samples
    )
    if (!page1 || !page200 || !floor1 || !floor200) return yield* Effect.die(new Error("no samples"))
    const line = (name: string, r: Summary) =>
      say(
        `[timeline] ${name.padEnd(34)} p50 ${ms(r.p50)} ms, p99 ${ms(r.p99)} ms, CPU ${int(r.cpuUs)} µs (this process), n=${r.n}`
      )
    yield* line("Timeline.page, page 1", page1)
    yield* line(`Timeline.page, page ${timeline.page}`, page200)
    yield* line("floor (keyset SQL, pg), page 1", floor1)
    yield* line(`floor (keyset SQL, pg), page ${timeline.page}`, floor200)

    const pageRatio = page200.p50 / page1.p50
    const floorRatio1 = page1.p50 / floor1.p50
    const floorRatio200 = page200.p50 / floor200.p50
    yield* say(
      `[timeline] ratio page ${timeline.page}/page 1 (p50): ${ratio(pageRatio)} (target <= ${targets.pageRatio}: ${verdict(pageRatio <= targets.pageRatio)}); ` +
        `service / floor: page 1 ${ratio(floorRatio1)}, page ${timeline.page} ${ratio(floorRatio200)}`
    )
    yield* say(
      `[timeline] rows served match the index order (seq desc): page 1 ${firstPageCorrect ? "yes" : "NO"}, page ${timeline.page} ${pageNCorrect ? "yes" : "NO"}`
    )
    return {
      page1,
      page200,
      floor1,
      floor200,
      pageRatio,
      floorRatio1,
      floorRatio200,
      walkNote,
      firstPageCorrect,
      pageNCorrect,
      plan1,
      plan200
    }
  })

// ---------------------------------------------------------------- BENCHMARKS.md

type CommitResult = Effect.Success<ReturnType<typeof commitLatency>>
type StatementResult = Effect.Success<ReturnType<typeof oneStatement>>
type StatementsResult = Effect.Success<ReturnType<typeof statementsPerUnit>>
type TimelineResult = Effect.Success<ReturnType<typeof timelinePages>>

const auditSection = (
  environment: {
    readonly date: string
    readonly postgres: string
    readonly database: string
    readonly seconds: number
  },
  commitResult: CommitResult,
  oneRead: StatementResult,
  statements: StatementsResult,
  pages: TimelineResult
) => {
  const c = commitResult
  const t = pages
  return `## Audit

Written by \`npm run bench:audit\` (bench/audit.ts) on ${environment.date}: ${environment.postgres},
Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model.trim() ?? "unknown CPU"}, database \`${environment.database}\`,
in a workspace the script creates and drops. Whole run: ${environment.seconds.toFixed(0)} s. Re-run the script to refresh this section.

### Single-record update unit against the raw driver (same run)

What is compared: \`UnitOfWork.run\` + \`Records.update\` of one \`bench/item\` record (a business object with
no plugin listeners), setting one number field, timed from the start of the unit until it has committed (no HTTP),
against its **floor**: the same statements on node-postgres (each prepared once per connection, as the service's
driver prepares its statements) in one transaction on a pooled connection
(bench/http/statements.ts: BEGIN, \`SELECT ... FOR UPDATE\`, \`UPDATE ... RETURNING\`, the audit
\`INSERT ... jsonb_populate_recordset\` with the ledger's chain, the service's own text and parameters, salts and content
hashes built in the floor as the service builds them, COMMIT), with nothing around them. **With audit**: an operational record
(the update dispatches an \`updated\` event: outbox, the audit listener's diff and staging, the one audit INSERT
before COMMIT, the no-wait hand-off to the in-process broadcast bus after it). **Without audit**: a draft record
(no event, no INSERT), and a floor without the INSERT. ${int(commit.warmUp)} warm-up units each, then
${int(commit.iterations)} each, the paths interleaved (in a random order each iteration; the fifth, the floor whose audit INSERT
is the one before the ledger, is the Ledger section's). CPU: this process's
user + system time per unit (\`process.cpuUsage\`), PostgreSQL's not included.

| path | service p50 / p99 ms | floor p50 / p99 ms | ratio (p50) | CPU per unit: service / floor | target | |
|---|---|---|---|---|---|---|
| update with audit | ${ms(c.withAudit.p50)} / ${ms(c.withAudit.p99)} | ${ms(c.floorWithAudit.p50)} / ${ms(c.floorWithAudit.p99)} | **${ratio(c.auditRatio)}** | ${int(c.withAudit.cpuUs)} / ${int(c.floorWithAudit.cpuUs)} µs | <= ${targets.commitRatio} | **${verdict(c.auditRatio <= targets.commitRatio)}** |
| update without audit | ${ms(c.withoutAudit.p50)} / ${ms(c.withoutAudit.p99)} | ${ms(c.floorWithoutAudit.p50)} / ${ms(c.floorWithoutAudit.p99)} | ${ratio(c.plainRatio)} | ${int(c.withoutAudit.cpuUs)} / ${int(c.floorWithoutAudit.cpuUs)} µs | | |

Audit rows written meanwhile: operational record ${int(c.auditedRows)}, draft records ${c.unauditedRows}.

### One statement through @effect/sql against node-postgres (same run)

A record read by id (\`SELECT id, state, version ... WHERE business_object = $1 AND id = $2\`) through the
service's \`SqlClient\` (\`@effect/sql-pg\`: statement compile, name transforms, a span only when tracing is on),
against the same text and parameters on node-postgres (a prepared statement, as the service's driver keeps one); interleaved, ${int(oneRead.service.n)} each.

| statement | service p50 / p99 ms | floor p50 / p99 ms | ratio (p50) | CPU per statement: service / floor |
|---|---|---|---|---|
| one read by id | ${ms(oneRead.service.p50)} / ${ms(oneRead.service.p99)} | ${ms(oneRead.floor.p50)} / ${ms(oneRead.floor.p99)} | ${ratio(oneRead.service.p50 / oneRead.floor.p50)} | ${int(oneRead.service.cpuUs)} / ${int(oneRead.floor.cpuUs)} µs |

### Audit INSERT statements per unit

Counted by a statement-level \`AFTER INSERT\` trigger (with a transition table for the row count) added to the
bench workspace's \`audit_entries\`; the rows are written by real units of work (\`Records.update\`, and the bench
plugin's \`spawn\` action creating N records in one unit).

| unit | audit rows | INSERT statements | unit took ms | target: exactly 1 INSERT |
|---|---:|---:|---:|---|
${statements.map((s) => `| ${s.unit} | ${int(s.rows)} | ${s.statements} | ${ms(s.elapsed)} | ${verdict(s.statements === 1 && s.rows === s.expectedRows)} |`).join("\n")}

### Timeline page latency, one record with ${int(timeline.rows)} rows

${int(timeline.rows)} audit rows for one record (four rows per instant, so \`seq\` breaks ties), plus
${int(timeline.otherRows)} rows over ${int(timeline.otherRecords)} other records, made with \`generate_series\`, then \`VACUUM ANALYZE\`.
Timed: \`Timeline.page\` (the service call behind GET /api/audit/business-object/..., no HTTP), limit ${timeline.limit},
at page 1 and at page ${timeline.page}, beside the floor: the keyset statement the service sends for the page
(same columns, \`seq <\` bound for page ${timeline.page}, ${timeline.limit + 1} rows) on node-postgres, rows taken as the driver
gives them. The four queries are interleaved (the order rotates). The page-${timeline.page} cursor: ${t.walkNote}.

| query | p50 ms | p99 ms | CPU per page (this process) | samples |
|---|---:|---:|---:|---:|
| Timeline.page, page 1 | ${ms(t.page1.p50)} | ${ms(t.page1.p99)} | ${int(t.page1.cpuUs)} µs | ${t.page1.n} |
| Timeline.page, page ${timeline.page} | ${ms(t.page200.p50)} | ${ms(t.page200.p99)} | ${int(t.page200.cpuUs)} µs | ${t.page200.n} |
| floor (keyset SQL on node-postgres), page 1 | ${ms(t.floor1.p50)} | ${ms(t.floor1.p99)} | ${int(t.floor1.cpuUs)} µs | ${t.floor1.n} |
| floor (keyset SQL on node-postgres), page ${timeline.page} | ${ms(t.floor200.p50)} | ${ms(t.floor200.p99)} | ${int(t.floor200.cpuUs)} µs | ${t.floor200.n} |

Ratio page ${timeline.page} / page 1 (p50): **${ratio(t.pageRatio)}**, target <= ${targets.pageRatio}: **${verdict(t.pageRatio <= targets.pageRatio)}**.
Service / floor (p50): page 1 ${ratio(t.floorRatio1)}, page ${timeline.page} ${ratio(t.floorRatio200)} (the HTTP target, <= 1.5x a bare
\`node:http\` server, is measured by \`npm run bench:http\`).
Rows served match the index order (seq desc): page 1 ${t.firstPageCorrect ? "yes" : "**no**"}, page ${timeline.page} ${t.pageNCorrect ? "yes" : "**no**"}.

Plans (\`EXPLAIN (FORMAT JSON)\` of the statement \`Timeline.compiledQuery\` gives for the timed pages):

- page 1: ${t.plan1}
- page ${timeline.page}: ${t.plan200}
`
}

// ---------------------------------------------------------------- main

const main = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const workspaces = yield* Workspaces
  const runStart = performance.now()
  const [version] = yield* sql<{ readonly version: string }>`SELECT split_part(version(), ' on ', 1) AS version`
  yield* say(`[bench] database ${redactedUrl(databaseUrl)} (${version?.version ?? "unknown"})`)
  yield* migrateSchema(platformSchema, platformMigrations)
  const workspace = yield* Effect.acquireRelease(
    workspaces.create(`bench-audit-${crypto.randomUUID().slice(0, 8)}`),
    (w) => Effect.andThen(workspaces.drop(w), say(`[bench] dropped workspace ${w.slug} (schema ${w.schema})`))
  )
  yield* say(`[bench] workspace ${workspace.slug} (schema ${workspace.schema})`)

  const commitResult = yield* commitLatency(workspace)
  // `--only=commit`: the commit rows alone (profiling, quick checks); BENCHMARKS.md is not written.
  if (process.argv.includes("--only=commit")) return
  const chain = yield* chainCost(workspace, databaseUrl, actor, item)
  const environment = {
    date: new Date().toISOString().slice(0, 10),
    postgres: version?.version ?? "PostgreSQL",
    database: redactedUrl(databaseUrl)
  }
  const writeLedger = Effect.sync(() =>
    writeBenchmarkSection(
      "Ledger",
      ledgerSection(
        environment,
        {
          iterations: commit.iterations,
          service: commitResult.withAudit,
          floor: commitResult.floorWithAudit,
          floorWithoutChain: commitResult.floorWithoutChain,
          chain: commitResult.chain
        },
        chain
      )
    )
  )
  // `--only=ledger`: the commit and ledger rows; writes the Ledger section alone.
  if (process.argv.includes("--only=ledger")) {
    yield* writeLedger
    return yield* say(`[bench] wrote the Ledger section of ${benchmarksFile}`)
  }
  const oneRead = yield* oneStatement(workspace)
  if (process.argv.includes("--only=statement")) return
  const statements = yield* statementsPerUnit(workspace)
  const pages = yield* timelinePages(workspace)

  const seconds = (performance.now() - runStart) / 1000
  yield* writeLedger
  yield* Effect.sync(() =>
    writeBenchmarkSection("Audit", auditSection({ ...environment, seconds }, commitResult, oneRead, statements, pages))
  )
  yield* say(`[bench] wrote the Audit and Ledger sections of ${benchmarksFile} (${seconds.toFixed(0)} s)`)
}).pipe(Effect.scoped)

NodeRuntime.runMain(main.pipe(Effect.provide(BenchLive), Effect.orDie))
