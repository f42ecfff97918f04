/**
 * The ledger rows of `npm run bench:audit` (docs/ledger.md): what the hash
 * chain costs the write path, measured beside its floor in the same run.
 *  - In a unit (bench/audit.ts's commit loop): two node-postgres floors that
 *    differ only in their audit INSERT, the service's chained one (the text
 *    and parameters AuditStaging sends: `ledgerInsertText`,
 *    `ledgerInsertParameters`) and the one sent before the ledger (positions
 *    only), interleaved with the service's own unit; `chainInUnit` takes the
 *    paired differences.
 *  - Per row, in Node: the content hash (salted commitments of the snapshot
 *    or the diff) of audit rows written by real units of work on `crm/deal`
 *    and on the bench's item.
 *  - By unit size: the two INSERTs alone at 1, 10 and 1,000 rows, the plan
 *    PostgreSQL keeps for the chained one, and EXPLAIN ANALYZE of it.
 * The verdict is the chain's share of the service's unit of work (p50).
 */
import { randomBytes } from "node:crypto"
import { SqlClient } from "effect/sql"
import { Effect } from "effect"
import type { Actor } from "../src/api/Actor"
import type { RecordValues } from "../src/api/Json"
import type { Workspace } from "../src/api/Workspace"
import { withActor } from "../src/context/Frames"
import { contentHash, rootSalts } from "../src/chain/rowHash"
import { ledgerRowColumns, ledgerRowOf } from "../src/chain/storedRow"
import type { StoredLedgerRow } from "../src/chain/storedRow"
import { Records } from "../src/records/Records"
import { ledgerInsertParameters } from "../src/unitOfWork/AuditStaging"
import type { StagedRow } from "../src/unitOfWork/AuditStaging"
import { UnitOfWork } from "../src/unitOfWork/UnitOfWork"
import { pg } from "./http/pg"
import { statementsOf, unchainedAuditRow } from "./http/statements"
import type { AuditTiming } from "./http/statements"

/** Issue 28: the chain costs at most this share of a unit of work. */
export const chainShareTarget = 0.05

const sizes = [
  { rows: 1, samples: 400 },
  { rows: 10, samples: 200 },
  { rows: 1_000, samples: 15 }
] as const
const warmUpInserts = 10
const hashing = { iterations: 2_000, rounds: 9 }

// ---------------------------------------------------------------- helpers

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.max(0, Math.ceil(0.5 * sorted.length) - 1)] ?? Number.NaN
}

const differences = (a: ReadonlyArray<number>, b: ReadonlyArray<number>) =>
  a.slice(0, b.length).map((value, i) => value - (b[i] ?? Number.NaN))

/** The median of `a[i] - b[i]`: two paths measured in the same iterations, so each pair saw the same machine. */
export const pairedMedian = (a: ReadonlyArray<number>, b: ReadonlyArray<number>) => median(differences(a, b))

/** A 95 % interval of `pairedMedian` (bootstrap: the median of 400 resamples of the pairs, 2.5th and 97.5th of them). */
export const pairedMedianInterval = (a: ReadonlyArray<number>, b: ReadonlyArray<number>): readonly [number, number] => {
  const pairs = differences(a, b)
  const medians = Array.from({ length: 400 }, () =>
    median(Array.from(pairs, () => pairs[Math.floor(Math.random() * pairs.length)] ?? Number.NaN))
  ).sort((x, y) => x - y)
  return [medians[9] ?? Number.NaN, medians[389] ?? Number.NaN]
}

const ms = (value: number) => (Math.abs(value) < 10 ? value.toFixed(3) : value.toFixed(1))
const us = (value: number) => Math.round(value).toLocaleString("en-US")
export const percent = (share: number) => `${(share * 100).toFixed(1)} %`
const verdict = (ok: boolean) => (ok ? "PASS" : "FAIL")
const say = (line: string) => Effect.sync(() => console.log(line))

/** Values and containers in a snapshot or diff: each is one salted commitment, and one derived salt. */
const nodesOf = (value: unknown): number =>
  value === null || typeof value !== "object"
    ? 1
    : 1 + (Array.isArray(value) ? value : Object.values(value)).reduce((sum: number, v) => sum + nodesOf(v), 0)

// ---------------------------------------------------------------- in a unit

export interface ChainInUnit {
  /** Paired median: the floor's unit with the chained INSERT minus the same unit with the INSERT before the ledger. */
  readonly unitMs: number
  /** Its 95 % interval: the units' own spread on a shared machine makes it wide. */
  readonly unitIntervalMs: readonly [number, number]
  /** Paired median of the INSERT statements alone (round trip, parameters built). */
  readonly statementMs: number
  readonly ledgerStatementMs: number
  readonly unchainedStatementMs: number
  /** Building the INSERT's parameters in Node, median: chained (salts, content hashes, payload) and before the ledger. */
  readonly ledgerParametersUs: number
  readonly unchainedParametersUs: number
  /** Paired median of the parameters' building, chained minus before the ledger. */
  readonly parametersUs: number
  /** The parts: `statementMs` and `parametersUs`, the two windows in which the floors differ. */
  readonly partsMs: number
  /** This process's CPU per unit: the chained floor minus the other. */
  readonly cpuUs: number
  /** `unitMs` over the service's unit (p50). */
  readonly share: number
  /** `partsMs` over the service's unit (p50). */
  readonly partsShare: number
}

export const chainInUnit = (input: {
  readonly ledgerUnits: ReadonlyArray<number>
  readonly unchainedUnits: ReadonlyArray<number>
  readonly ledgerInserts: ReadonlyArray<AuditTiming>
  readonly unchainedInserts: ReadonlyArray<AuditTiming>
  readonly serviceUnitMs: number
  readonly ledgerCpuUs: number
  readonly unchainedCpuUs: number
}): ChainInUnit => {
  const unitMs = pairedMedian(input.ledgerUnits, input.unchainedUnits)
  const statements = (timings: ReadonlyArray<AuditTiming>) => timings.map((t) => t.statementMs)
  const parameters = (timings: ReadonlyArray<AuditTiming>) => timings.map((t) => 1000 * t.parametersMs)
  const statementMs = pairedMedian(statements(input.ledgerInserts), statements(input.unchainedInserts))
  const parametersUs = pairedMedian(parameters(input.ledgerInserts), parameters(input.unchainedInserts))
  const partsMs = statementMs + parametersUs / 1000
  return {
    unitMs,
    unitIntervalMs: pairedMedianInterval(input.ledgerUnits, input.unchainedUnits),
    statementMs,
    ledgerStatementMs: median(statements(input.ledgerInserts)),
    unchainedStatementMs: median(statements(input.unchainedInserts)),
    ledgerParametersUs: median(parameters(input.ledgerInserts)),
    unchainedParametersUs: median(parameters(input.unchainedInserts)),
    parametersUs,
    partsMs,
    cpuUs: input.ledgerCpuUs - input.unchainedCpuUs,
    share: unitMs / input.serviceUnitMs,
    partsShare: partsMs / input.serviceUnitMs
  }
}

// ---------------------------------------------------------------- per row, in Node

const lineItem = (id: string, product: string, quantity: number, price: string) => ({ id, product, quantity, price })
const dealCreated: RecordValues = {
  title: "Bench fleet",
  stage: "negotiation",
  amount: "12500.00",
  closeDate: "2026-12-15",
  address: { street: "1 Main Street", city: "Springfield", country: "US" },
  lineItems: [
    lineItem("licences", "Pilot licences", 25, "400.00"),
    lineItem("onboarding", "Onboarding", 1, "2500.00"),
    lineItem("support", "Support, first year", 1, "1800.00"),
    lineItem("training", "Training days", 3, "900.00"),
    lineItem("hardware", "Scanners", 10, "120.00")
  ]
}
/** Two fields, one line item changed, one removed, one added. */
const dealUpdated: RecordValues = {
  stage: "won",
  amount: "13100.00",
  lineItems: [
    lineItem("licences", "Pilot licences", 30, "400.00"),
    lineItem("onboarding", "Onboarding", 1, "2500.00"),
    lineItem("support", "Support, first year", 1, "1800.00"),
    lineItem("training", "Training days", 3, "900.00"),
    lineItem("tablets", "Tablets", 4, "350.00")
  ]
}

const stagedOf = (stored: StoredLedgerRow): StagedRow => ({
  id: stored.id,
  actor: stored.actor,
  correlationId: stored.correlationId,
  businessObject: stored.businessObject,
  businessObjectId: stored.businessObjectId,
  recordVersion: Number(stored.recordVersion ?? 0),
  operation: stored.operation,
  cause: stored.cause,
  ...(stored.record === null ? {} : { record: stored.record }),
  ...(stored.changes === null ? {} : { changes: stored.changes })
})

/**
 * CPU µs per call of each function (this process's user + system time: on a shared machine the wall clock of a
 * busy loop measures the scheduler): `rounds` rounds of `iterations` calls, the functions in turn (the order
 * rotates), median round.
 */
const interleavedMicros = (functions: ReadonlyArray<() => unknown>) => {
  for (const run of functions) for (let i = 0; i < hashing.iterations; i++) run()
  const rounds = functions.map((): Array<number> => [])
  for (let round = 0; round < hashing.rounds; round++) {
    for (let k = 0; k < functions.length; k++) {
      const index = (round + k) % functions.length
      const run = functions[index]
      if (run === undefined) continue
      const started = process.cpuUsage()
      for (let i = 0; i < hashing.iterations; i++) run()
      const used = process.cpuUsage(started)
      rounds[index]?.push((used.user + used.system) / hashing.iterations)
    }
  }
  return rounds.map(median)
}

export interface RowHashing {
  readonly label: string
  readonly nodes: number
  /** `contentHash` with a fresh salt (`randomBytes(16)`), CPU µs. */
  readonly hashUs: number
  /** `ledgerInsertParameters` of this one row, and the INSERT's payload before the ledger, CPU µs. */
  readonly ledgerParametersUs: number
  readonly unchainedParametersUs: number
}

const perRow = (workspace: Workspace, actor: Actor, item: string) =>
  Effect.gen(function* () {
    const units = yield* UnitOfWork
    const records = yield* Records
    const sql = yield* SqlClient.SqlClient
    const inUnit = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      units.run(workspace, effect).pipe(withActor(actor), Effect.orDie)
    const deal = yield* inUnit(records.create("crm/deal", dealCreated))
    yield* inUnit(records.update("crm/deal", deal.id, dealUpdated))
    const counted = yield* inUnit(records.create(item, { name: "hashed", n: 0 }))
    yield* inUnit(records.update(item, counted.id, { n: 1 }))
    const stored = yield* sql<StoredLedgerRow>`SELECT ${sql.literal(ledgerRowColumns)}
      FROM ${sql(workspace.table("audit_entries"))} AS e
      WHERE e.business_object_id IN (${deal.id}, ${counted.id}) ORDER BY e.position`.pipe(Effect.orDie)
    const find = (businessObject: string, operation: string) => {
      const row = stored.find((r) => r.businessObject === businessObject && r.operation === operation)
      if (row === undefined) throw new Error(`no ${operation} row of ${businessObject}`)
      return row
    }
    const kinds = [
      { label: `\`${item}\` updated: the diff of one number field (the unit above)`, row: find(item, "updated") },
      { label: "`crm/deal` created: the snapshot, with an address and 5 line items", row: find("crm/deal", "created") },
      {
        label: "`crm/deal` updated: the diff of 2 fields and 3 line items (changed, removed, added)",
        row: find("crm/deal", "updated")
      }
    ]
    const results: Array<RowHashing> = []
    for (const { label, row } of kinds) {
      const hashed = ledgerRowOf(row)
      const staged = stagedOf(row)
      const [hashUs, ledgerParametersUs, unchainedParametersUs] = interleavedMicros([
        () => contentHash(hashed, rootSalts(randomBytes(16))),
        () => ledgerInsertParameters([staged], null),
        () => JSON.stringify([unchainedAuditRow(staged)])
      ])
      const result: RowHashing = {
        label,
        nodes: nodesOf(row.record ?? row.changes),
        hashUs: hashUs ?? Number.NaN,
        ledgerParametersUs: ledgerParametersUs ?? Number.NaN,
        unchainedParametersUs: unchainedParametersUs ?? Number.NaN
      }
      results.push(result)
      yield* say(
        `[ledger] ${label}: ${result.nodes} JSON nodes, contentHash ${us(result.hashUs)} µs; INSERT parameters ${us(result.ledgerParametersUs)} µs (before the ledger ${us(result.unchainedParametersUs)} µs)`
      )
    }
    return results
  })

// ---------------------------------------------------------------- by unit size

export interface BySize {
  readonly rows: number
  readonly samples: number
  readonly ledgerMs: number
  readonly unchainedMs: number
  /** Paired median, ledger minus before the ledger. */
  readonly differenceMs: number
  readonly ledgerParametersMs: number
  readonly unchainedParametersMs: number
}

const createdRow = (item: string, actor: Actor, n: number): StagedRow => ({
  id: crypto.randomUUID(),
  actor,
  correlationId: crypto.randomUUID(),
  businessObject: item,
  businessObjectId: crypto.randomUUID(),
  recordVersion: 1,
  operation: "created",
  cause: null,
  record: { name: `spawned ${n}`, n }
})

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null
/** The plan nodes of an EXPLAIN (FORMAT JSON), depth first. */
const planNodes = (value: unknown): Array<Record<string, unknown>> => {
  if (Array.isArray(value)) return value.flatMap(planNodes)
  if (!isObject(value)) return []
  return [...("Node Type" in value ? [value] : []), ...planNodes(value.Plan), ...planNodes(value.Plans)]
}
const numberAt = (value: unknown, key: string) => (isObject(value) && typeof value[key] === "number" ? value[key] : NaN)

const bySize = (workspace: Workspace, databaseUrl: string, actor: Actor, item: string) =>
  Effect.gen(function* () {
    const pool = yield* Effect.acquireRelease(
      Effect.sync(() => new pg.Pool({ connectionString: databaseUrl, max: 1, application_name: "bench-ledger" })),
      (p) => Effect.promise(() => p.end())
    )
    const statements = statementsOf(workspace.schema)
    return yield* Effect.promise(async () => {
      const client = await pool.connect()
      const insert = async (chained: boolean, rows: number) => {
        const staged = Array.from({ length: rows }, (_, n) => createdRow(item, actor, n))
        const started = performance.now()
        const query = chained
          ? { ...(rows === 1 ? statements.audit : statements.auditRows), values: ledgerInsertParameters(staged, null) }
          : { ...statements.auditWithoutChain, values: [JSON.stringify(staged.map(unchainedAuditRow))] }
        const sent = performance.now()
        await client.query("BEGIN")
        const before = performance.now()
        await client.query(query)
        const statementMs = performance.now() - before
        await client.query("COMMIT")
        return { parametersMs: sent - started, statementMs }
      }
      const results: Array<BySize> = []
      for (const size of sizes) {
        const chainedTimings: Array<AuditTiming> = []
        const unchainedTimings: Array<AuditTiming> = []
        for (let i = 0; i < warmUpInserts + size.samples; i++) {
          for (const chained of i % 2 === 0 ? [true, false] : [false, true]) {
            const timing = await insert(chained, size.rows)
            if (i >= warmUpInserts) (chained ? chainedTimings : unchainedTimings).push(timing)
          }
        }
        const statementTimes = (list: ReadonlyArray<AuditTiming>) => list.map((t) => t.statementMs)
        results.push({
          rows: size.rows,
          samples: size.samples,
          ledgerMs: median(statementTimes(chainedTimings)),
          unchainedMs: median(statementTimes(unchainedTimings)),
          differenceMs: pairedMedian(statementTimes(chainedTimings), statementTimes(unchainedTimings)),
          ledgerParametersMs: median(chainedTimings.map((t) => t.parametersMs)),
          unchainedParametersMs: median(unchainedTimings.map((t) => t.parametersMs))
        })
      }
      // How PostgreSQL ran the prepared chained INSERT of several rows on this connection: a generic plan is planned once.
      const plans = (
        await client.query<{ readonly generic: string; readonly custom: string }>(
          "SELECT generic_plans::text AS generic, custom_plans::text AS custom FROM pg_prepared_statements WHERE name = $1",
          [statements.auditRows.name]
        )
      ).rows[0]
      const big = sizes[sizes.length - 1]?.rows ?? 1
      const staged = Array.from({ length: big }, (_, n) => createdRow(item, actor, n))
      await client.query("BEGIN")
      const explained = await client.query(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${statements.auditRows.text}`,
        ledgerInsertParameters(staged, null)
      )
      await client.query("ROLLBACK")
      client.release()
      const plan = explained.rows.flatMap((row) => Object.values(row)).flat()[0]
      const chainNode = planNodes(plan).find((node) => node["Subplan Name"] === "CTE chain")
      return {
        results,
        plans: { generic: Number(plans?.generic ?? 0), custom: Number(plans?.custom ?? 0) },
        explain: {
          rows: big,
          planningMs: numberAt(plan, "Planning Time"),
          executionMs: numberAt(plan, "Execution Time"),
          chainMs: numberAt(chainNode, "Actual Total Time")
        }
      }
    })
  })

// ---------------------------------------------------------------- all of it

export const chainCost = (workspace: Workspace, databaseUrl: string, actor: Actor, item: string) =>
  Effect.gen(function* () {
    const rows = yield* perRow(workspace, actor, item)
    yield* say(`[ledger] the two audit INSERTs alone, by unit size (raw driver, prepared, interleaved)`)
    const sized = yield* bySize(workspace, databaseUrl, actor, item)
    for (const s of sized.results)
      yield* say(
        `[ledger] ${s.rows} row(s): chained ${ms(s.ledgerMs)} ms, before the ledger ${ms(s.unchainedMs)} ms, difference ${ms(s.differenceMs)} ms (paired median, n=${s.samples}); parameters ${ms(s.ledgerParametersMs)} / ${ms(s.unchainedParametersMs)} ms`
      )
    yield* say(
      `[ledger] the chained INSERT of several rows, its plans on that connection: ${sized.plans.generic} generic, ${sized.plans.custom} custom; ` +
        `EXPLAIN ANALYZE at ${sized.explain.rows} rows: planning ${ms(sized.explain.planningMs)} ms, execution ${ms(sized.explain.executionMs)} ms, of which the chain CTE ${ms(sized.explain.chainMs)} ms`
    )
    return { rows, ...sized }
  })

export type ChainCost = Effect.Success<ReturnType<typeof chainCost>>

// ---------------------------------------------------------------- BENCHMARKS.md

interface UnitFigure {
  readonly p50: number
  readonly p99: number
  readonly cpuUs: number
}

export const ledgerSection = (
  environment: { readonly date: string; readonly postgres: string; readonly database: string },
  unit: {
    readonly iterations: number
    readonly service: UnitFigure
    readonly floor: UnitFigure
    readonly floorWithoutChain: UnitFigure
    readonly chain: ChainInUnit
  },
  cost: ChainCost
) => {
  const c = unit.chain
  return `## Ledger

Written by \`npm run bench:audit\` (bench/audit.ts, bench/ledger.ts) on ${environment.date}: ${environment.postgres},
Node ${process.version}, database \`${environment.database}\` (\`--only=ledger\` writes this section alone).
What the hash chain of docs/ledger.md costs the write path: per staged row a random salt and a content hash in
Node (\`contentHash\`, salted Merkle commitments of the snapshot or diff), and in SQL each row's link, PostgreSQL's
\`sha256\` under the workspace's \`feed_position\` lock, in the one audit INSERT (the counter's UPDATE links a one-row
unit, a recursive CTE a larger one). The service cannot run without the chain,
so its cost is measured on the floor: two node-postgres units with the same statements (BEGIN, \`SELECT ... FOR
UPDATE\`, \`UPDATE ... RETURNING\`, the audit INSERT, COMMIT) that differ only in the INSERT, the service's own
text and parameters (\`ledgerInsertText\`, \`ledgerInsertParameters\` of src/unitOfWork/AuditStaging.ts: the floor
builds the salts and hashes as the service does) against the INSERT sent before the ledger (positions only).
Both ran in the loop of the Audit section's units, interleaved with the service's own unit (${us(unit.iterations)} each);
each difference is the median of the per-iteration differences (same iteration, same machine).

| figure | with the chain | without (INSERT before the ledger) | the chain's cost |
|---|---|---|---|
| floor unit, p50 / p99 | ${ms(unit.floor.p50)} / ${ms(unit.floor.p99)} ms | ${ms(unit.floorWithoutChain.p50)} / ${ms(unit.floorWithoutChain.p99)} ms | **${ms(c.unitMs)} ms** |
| the audit INSERT alone, p50 | ${ms(c.ledgerStatementMs)} ms | ${ms(c.unchainedStatementMs)} ms | ${ms(c.statementMs)} ms |
| building its parameters in Node, p50 | ${us(c.ledgerParametersUs)} µs | ${us(c.unchainedParametersUs)} µs | ${us(c.parametersUs)} µs |
| CPU of the process per unit | ${us(unit.floor.cpuUs)} µs | ${us(unit.floorWithoutChain.cpuUs)} µs | ${us(c.cpuUs)} µs |

The service's unit (\`UnitOfWork.run\` + \`Records.update\` with audit, same loop): p50 ${ms(unit.service.p50)} ms,
${us(unit.service.cpuUs)} µs CPU. The chain's share of it, target <= ${percent(chainShareTarget)}:

| estimate | the chain's cost | share of the service's unit | |
|---|---|---|---|
| the whole unit (paired median; 95 % interval) | ${ms(c.unitMs)} ms (${ms(c.unitIntervalMs[0])} to ${ms(c.unitIntervalMs[1])}) | **${percent(c.share)}** (${percent(c.unitIntervalMs[0] / unit.service.p50)} to ${percent(c.unitIntervalMs[1] / unit.service.p50)}) | **${verdict(c.share <= chainShareTarget)}** |
| its parts: the INSERT's difference plus the parameters' | ${ms(c.partsMs)} ms | **${percent(c.partsShare)}** | **${verdict(c.partsShare <= chainShareTarget)}** |

The two floors differ only inside those two windows, so their sum is the chain's cost with far less noise than the
difference of whole units, whose spread on a shared machine is milliseconds; the whole-unit figure also holds what the
windows cannot see (the COMMIT's few more bytes of WAL, garbage collected later). Over HTTP: the HTTP section's
"floor without the chain" rows (\`npm run bench:http\`).

Per row, in Node: CPU time of this process (${us(hashing.rounds)} rounds of ${us(hashing.iterations)} calls, median round), on audit rows written by
units of work:

| row | JSON nodes | \`contentHash\` with its salt | INSERT parameters for the row: chained / before the ledger |
|---|---:|---:|---|
${cost.rows.map((r) => `| ${r.label} | ${r.nodes} | ${us(r.hashUs)} µs | ${us(r.ledgerParametersUs)} / ${us(r.unchainedParametersUs)} µs |`).join("\n")}

By unit size, the two INSERTs alone (created rows of \`bench/item\`, raw driver, prepared, each in its own committed
transaction, alternating):

| rows | chained INSERT p50 | before the ledger p50 | difference (paired median) | parameters: chained / before |
|---:|---:|---:|---:|---|
${cost.results.map((s) => `| ${s.rows.toLocaleString("en-US")} | ${ms(s.ledgerMs)} ms | ${ms(s.unchainedMs)} ms | ${ms(s.differenceMs)} ms | ${ms(s.ledgerParametersMs)} / ${ms(s.unchainedParametersMs)} ms |`).join("\n")}

The chained INSERT of several rows (a recursive CTE; a unit of one row has a text of its own, a plain UPDATE of the
counter) as prepared on that connection ran ${cost.plans.generic} times on its generic plan and ${cost.plans.custom} times on a
custom one (PostgreSQL plans the first five custom). EXPLAIN ANALYZE at
${cost.explain.rows.toLocaleString("en-US")} rows: planning ${ms(cost.explain.planningMs)} ms, execution ${ms(cost.explain.executionMs)} ms, of which the chain CTE ${ms(cost.explain.chainMs)} ms.

How it was brought down (2026-11-26, Node 24, the machine shared). In quiet moments (the service's unit 1.4-1.6 ms)
the chain cost a one-record unit 0.19 ms (95 % 0.18-0.21), 12 % of the service's unit, with the first two changes
below already in (the generic plan had taken about 0.2 ms off the INSERT, the faster hashing 18 µs of CPU off this
row's hash, measured hot); 0.11-0.12 ms (8 %) with the one-row form; 0.087-0.096 ms (5.5-6.5 %, its parts 5.3-5.5 %)
with the salt buffer. Loaded (other sessions' tests, load average 8-10: the service's unit 3.5-4.5 ms), the same code
measures 3.0-3.2 %, its parts 3.2-4.0 %. Over HTTP the PATCH is 2.9-3.3 ms and the chain 3.5-3.8 % of it.

- SQL, the plan: the first version of the INSERT joined each step of the recursion to the content hashes unnested from
  a parameter array. Its row estimate depended on the parameter, so PostgreSQL never kept a generic plan for the
  prepared statement and planned it again at every unit (0 generic, 202 custom plans in 202 executions): a one-row
  INSERT took 0.48-0.55 ms against 0.30-0.35 ms after (before the ledger: 0.22-0.25 ms), and at 1,000 rows a custom
  plan could pick a merge join that re-read the array at every step (the chain CTE 45 ms in EXPLAIN ANALYZE, now 2-3 ms).
  Each step now reads its hash at its offset in one \`bytea\` (\`substring\`): no join, no estimate that depends on a
  parameter.
- SQL, one row: a unit of one row (most units) is linked by the counter's own UPDATE (\`SET head = sha256(...)\` from
  the head it replaces; READ COMMITTED evaluates the SET again on the latest version after a wait), with no recursion
  and no \`FOR UPDATE\` beforehand: 0.06 ms of the INSERT's execution above the INSERT before the ledger became 0.02,
  and the unit writes a WAL record less. Units of several rows keep the recursive CTE. The same bytes either way
  (test/ledger/chain-unit-sizes.test.ts).
- Node: \`contentHash\` of the deal snapshot above took 166-170 µs of CPU at commit 776c763 and takes 43-47 µs in this
  tree (each in a process of its own); the one-field diff 28 µs, now 10. \`sha256\` is one \`crypto.hash\` of the joined
  parts asked for hex (src/chain/digestBytes.ts: 85 µs with that alone), the commitments of a row with nothing erased
  are hashed without allocating their parts (src/chain/saltedCommit.ts), and canonical JSON sorts keys, not entries.
  Salts are cut from a buffer of random bytes filled 256 at a time (src/unitOfWork/saltPool.ts): a \`randomBytes(16)\`
  per row cost about 12 µs in a unit, as much as 4 KiB. Inside a unit the hashing code is cold: the parameters of a
  one-field diff take 40-60 µs there against 8-14 µs of CPU in the loop above.
- The hash formats did not change (the property tests of test/chain compare every path with the reference \`commit\`,
  and test/ledger/auditor-script.test.ts runs an independent implementation over what the service wrote).
- What is left, and what would close it in process (about 0.02 ms more to find): the parameters (40 µs, Node's
  hashing run cold once per unit: a row's content hash still goes through two code paths, the allocating \`sha256\`
  for the root salt and the row's canonical JSON and src/chain/saltedCommit.ts for the values; one allocation-free
  path for the whole row would touch less code), and the INSERT (0.03-0.04 ms: the larger row, two more columns, one
  \`sha256\`). Not a switch, nor a lighter chain: the formats stay.
- The measurement: the interleaved paths used to run in a fixed rotation, so the floor with the chain always ran right
  after the service's unit and paid for its work after COMMIT: the chain's cost in the unit came out 0.1-0.6 ms above
  the sum of its parts (the INSERT's difference and the parameters'). Each iteration now runs the paths in a random
  order (bench/order.ts), and the two agree.
`
}
