/**
 * `npm run bench:import` (issue 27, "Bulk writes"): 100,000 crm/deal records
 * with line items (and a company link) from an NDJSON file through
 * `admin records import`'s own handler (src/app/admin/recordsImport.ts: the
 * file streamed in batches of 1,000, each a bulk write in one unit of work
 * under its Idempotency-Key, as the operator), in a workspace it creates and
 * drops. Prints records/s and the process's RSS growth, beside a floor
 * measured in the same run: the raw `pg` driver reading the same file and
 * inserting the same records and their audit rows (the service's ledger
 * INSERT, `ledgerInsertText`) in transactions of 1,000, in another fresh
 * workspace. At the end every imported record must have its audit row.
 *
 * Database: DATABASE_URL, else TEST_DATABASE_URL, else
 * postgres://postgres@127.0.0.1:5432/test. RECORDS=n changes the count.
 */
import { NodeRuntime } from "@effect/platform-node"
import { SqlClient } from "effect/sql"
import { Console, Duration, Effect, Option, Redacted } from "effect"
import { createWriteStream, mkdtempSync, rmSync } from "node:fs"
import { execSync } from "node:child_process"
import { cpus, tmpdir } from "node:os"
import { join } from "node:path"
import { once } from "node:events"
import type { Actor } from "../src/api/Actor"
import type { RecordValues } from "../src/api/Json"
import type { Workspace } from "../src/api/Workspace"
import { AdminInvocation } from "../src/app/admin/AdminInvocation"
import { importBatches } from "../src/app/admin/importFile"
import { recordsImport } from "../src/app/admin/recordsImport"
import { withActor } from "../src/context/Frames"
import { crm } from "../src/plugins/crm"
import { PluginRegistry } from "../src/plugins/PluginRegistry"
import { Records } from "../src/records/Records"
import { migrateSchema } from "../src/tenancy/Migrations"
import { platformMigrations, platformSchema } from "../src/tenancy/migrations/platform"
import { Workspaces } from "../src/tenancy/Workspaces"
import { ledgerInsertParameters, ledgerInsertText } from "../src/unitOfWork/AuditStaging"
import type { StagedRow } from "../src/unitOfWork/AuditStaging"
import { UnitOfWork } from "../src/unitOfWork/UnitOfWork"
import { benchServices } from "./benchServices"
import { writeBenchmarkSection } from "./benchmarksFile"
import { pg } from "./http/pg"

const databaseUrl =
  process.env.DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"
const total = Number(process.env.RECORDS ?? 100_000)
const batchSize = 1_000
const companies = 10
const targets = { recordsPerSecond: 5_000, rssGrowthMiB: 128 }
const operator: Actor = { kind: "system", name: "operator" }

const BenchLive = benchServices(PluginRegistry.layerWith([crm]), {
  databaseUrl: Option.some(Redacted.make(databaseUrl)),
  databasePoolSize: 4,
  databaseStatementTimeout: Duration.minutes(5),
  redisUrl: Option.none()
})

const say = (line: string) => Console.log(line)
const mib = (bytes: number) => bytes / (1024 * 1024)
const grouped = (n: number) => Math.round(n).toLocaleString("en-US")

/** The NDJSON file: a deal per line, with two line items and a link to one of the companies. */
const writeFile = (path: string, companyIds: ReadonlyArray<string>) =>
  Effect.promise(async () => {
    const out = createWriteStream(path)
    for (let i = 0; i < total; i++) {
      const line = JSON.stringify({
        title: `Imported deal ${i}`,
        stage: "open",
        amount: `${(i % 9_000) + 100}.00`,
        company: companyIds[i % companyIds.length],
        lineItems: [
          { product: "Kiosk", quantity: 1 + (i % 5), price: "1200.00" },
          { product: "Support", quantity: 12, price: "50.00" }
        ]
      })
      if (!out.write(`${line}\n`)) await once(out, "drain")
    }
    out.end()
    await once(out, "finish")
  })

/** Samples the RSS every 50 ms while `effect` runs: its peak above the RSS before. */
const withRssGrowth = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const before = process.memoryUsage().rss
    let peak = before
    const timer = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss)
    }, 50)
    const started = performance.now()
    const value = yield* Effect.ensuring(
      effect,
      Effect.sync(() => clearInterval(timer))
    )
    peak = Math.max(peak, process.memoryUsage().rss)
    return { value, seconds: (performance.now() - started) / 1_000, growth: peak - before }
  })

/**
 * The floor: the same file read the same way, each batch of 1,000 one
 * transaction of two statements on one connection: the records by one INSERT
 * and their audit rows by the service's ledger INSERT. No validation, no
 * link check, no idempotency key, no outbox.
 */
const floor = (workspace: Workspace, path: string) =>
  Effect.promise(async () => {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 1, application_name: "bench-import-floor" })
    const client = await pool.connect()
    const insertRecords = `INSERT INTO "${workspace.schema}"."records" (business_object, id, state, values)
      SELECT 'crm/deal', (r.value->>0)::uuid, 'operational', r.value->1 FROM jsonb_array_elements($1::jsonb) AS r`
    try {
      for await (const batch of importBatches(path, "floor", batchSize)) {
        const correlationId = crypto.randomUUID()
        const rows = batch.items.flatMap((item) => {
          if (!("create" in item)) return []
          const values = item.create as RecordValues
          const lineItems = Array.isArray(values.lineItems)
            ? values.lineItems.map((entry) => ({ id: crypto.randomUUID(), ...(entry as object) }))
            : []
          return [{ id: crypto.randomUUID(), values: { ...values, lineItems } }]
        })
        const staged: Array<StagedRow> = rows.map((row) => ({
          id: crypto.randomUUID(),
          actor: operator,
          correlationId,
          businessObject: "crm/deal",
          businessObjectId: row.id,
          recordVersion: 1,
          operation: "created",
          cause: null,
          record: row.values
        }))
        await client.query("BEGIN")
        await client.query(insertRecords, [JSON.stringify(rows.map((row) => [row.id, row.values]))])
        await client.query(ledgerInsertText(workspace.schema, staged.length), [...ledgerInsertParameters(staged, null)])
        await client.query("COMMIT")
      }
    } finally {
      client.release()
      await pool.end()
    }
  })

const main = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const workspaces = yield* Workspaces
  yield* migrateSchema(platformSchema, platformMigrations)
  const fresh = (name: string) =>
    Effect.acquireRelease(workspaces.create(`bench-${name}-${crypto.randomUUID().slice(0, 8)}`), (w) =>
      workspaces.drop(w)
    )
  const workspace = yield* fresh("import")
  const floorWorkspace = yield* fresh("import-floor")
  const dir = yield* Effect.acquireRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "bench-import-"))),
    (d) => Effect.sync(() => rmSync(d, { recursive: true, force: true }))
  )
  const file = join(dir, "deals.ndjson")

  const records = yield* Records
  const units = yield* UnitOfWork
  const companyIds = yield* Effect.forEach([workspace, floorWorkspace], (w) =>
    Effect.forEach(
      Array.from({ length: companies }, (_, i) => i),
      (i) => units.run(w, records.create("crm/company", { name: `Company ${i}` })).pipe(withActor(operator))
    )
  ).pipe(Effect.map(([own]) => (own ?? []).map((company) => company.id)))
  // The floor inserts without checking links: the ids of the service's companies do as well there.
  yield* writeFile(file, companyIds)
  yield* say(`[bench] ${grouped(total)} deals in ${file}; workspaces ${workspace.slug}, ${floorWorkspace.slug}`)
  const load = execSync("uptime").toString().trim()

  const floorRun = yield* withRssGrowth(floor(floorWorkspace, file))
  const floorRate = total / floorRun.seconds
  yield* say(`[bench] floor (pg, batches of 1,000): ${floorRun.seconds.toFixed(1)} s, ${grouped(floorRate)} records/s`)

  const base = yield* Console.Console
  // The batch lines of a non-terminal run: one per 1,000 records, not the measure.
  const batchEnds: Array<number> = []
  const quiet: Console.Console = { ...base, log: () => {}, error: () => void batchEnds.push(performance.now()) }
  const importRun = yield* withRssGrowth(
    recordsImport({ workspace: workspace.slug, businessObject: "crm/deal", file }).pipe(
      Effect.provideService(AdminInvocation, { cwd: dir, progress: false, confirmation: { _tag: "None" } }),
      Effect.provideService(Console.Console, quiet)
    )
  )
  const rate = total / importRun.seconds
  const batchMs = batchEnds.slice(1).map((end, i) => end - (batchEnds[i] ?? end))
  const spread = (part: ReadonlyArray<number>) => part.map((ms) => ms.toFixed(0)).join(" ")
  yield* say(`[bench] ms per batch, first: ${spread(batchMs.slice(0, 5))}; last: ${spread(batchMs.slice(-5))}`)

  const [check] = yield* sql<{ records: number; audited: number }>`SELECT
      (SELECT count(*)::int FROM ${sql(workspace.table("records"))} WHERE business_object = 'crm/deal') AS records,
      (SELECT count(*)::int FROM ${sql(workspace.table("records"))} r WHERE business_object = 'crm/deal' AND EXISTS
        (SELECT 1 FROM ${sql(workspace.table("audit_entries"))} a
          WHERE a.business_object_id = r.id::text AND a.operation = 'created')) AS audited`
  const complete = check?.records === total && check.audited === total
  const growth = mib(importRun.growth)
  const lines = [
    `import (admin records import's handler): ${importRun.seconds.toFixed(1)} s, ${grouped(rate)} records/s (target >= ${grouped(targets.recordsPerSecond)})`,
    `floor (pg driver, same rows and audit rows, transactions of 1,000): ${floorRun.seconds.toFixed(1)} s, ${grouped(floorRate)} records/s`,
    `ratio import / floor: ${(rate / floorRate).toFixed(2)}`,
    `RSS growth during the import: ${growth.toFixed(0)} MiB (target < ${targets.rssGrowthMiB}); floor: ${mib(floorRun.growth).toFixed(0)} MiB`,
    `every record with its created audit row: ${complete ? "yes" : "NO"} (${JSON.stringify(check)})`
  ]
  for (const line of lines) yield* say(`[bench] ${line}`)
  writeBenchmarkSection(
    "Import (`npm run bench:import`)",
    `## Import (\`npm run bench:import\`)

${grouped(total)} crm/deal records (two line items and a company link each) from an NDJSON file through
\`admin records import\`'s handler (the CLI's own path without its argument parsing: the file streamed in
batches of 1,000, each one bulk write in one unit of work under its Idempotency-Key), in a fresh workspace;
the floor reads the same file and inserts the same records and audit rows (the service's ledger INSERT)
with the raw \`pg\` driver in transactions of 1,000, in another fresh workspace, in the same run.

Load when it started: \`${load}\` on ${cpus().length} cores. Far above the cores (other processes' work),
the absolute rates are the machine's, not the service's: read the ratio to the floor.

| | records/s | time | RSS growth |
|---|---:|---:|---:|
| import | ${grouped(rate)} | ${importRun.seconds.toFixed(1)} s | ${growth.toFixed(0)} MiB |
| floor | ${grouped(floorRate)} | ${floorRun.seconds.toFixed(1)} s | ${mib(floorRun.growth).toFixed(0)} MiB |

Ratio import / floor: ${(rate / floorRate).toFixed(2)}. Targets: >= ${grouped(targets.recordsPerSecond)} records/s, RSS growth < ${targets.rssGrowthMiB} MiB: ${rate >= targets.recordsPerSecond && growth < targets.rssGrowthMiB ? "met" : "NOT met"}.
Every record has its created audit row: ${complete ? "yes" : "no"}.
`
  )
  if (!complete) return yield* Effect.die(new Error(`incomplete import: ${JSON.stringify(check)}`))
})

NodeRuntime.runMain(main.pipe(Effect.scoped, Effect.provide(BenchLive), Effect.orDie))
