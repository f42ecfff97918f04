import { SqlClient } from "effect/sql"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { PrimaryReadSqlClient, ReadSqlClient } from "../db/Database"
import { executeFixed, quotedName } from "../db/fixedStatement"
import type { RecordValues } from "../api/Json"
import { RecordState, StoredRecord } from "../api/StoredRecord"
import type { Workspace } from "../api/Workspace"
import type { ListPlan } from "./ListPlan"

const isoMicros = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`

/**
 * A row as the driver returns it: a bigint (the version) comes as a string.
 * `values` is a jsonb column the driver has parsed, so it is JSON by
 * construction: only its being an object is checked here, not every member
 * again (a record is decoded on every write and read; the response encoder
 * still checks the whole record against `StoredRecord`).
 */
const RecordRow = Schema.Struct({
  ...StoredRecord.fields,
  version: Schema.NumberFromString.check(Schema.isInt()),
  values: Schema.declare(
    (value: unknown): value is RecordValues => typeof value === "object" && value !== null && !Array.isArray(value),
    {
      identifier: "RecordValues"
    }
  )
})
// Compiled once: a decoder made inside a hot function would be compiled again on every call.
const decodeRows = Schema.decodeUnknownEffect(Schema.Array(RecordRow))
// The row was just decoded with the class's own fields: the constructor need not check them again.
const toRecord = (row: typeof RecordRow.Type) => new StoredRecord(row, { disableChecks: true })

/** A record's columns but its values, under their field names: the rows need no renaming (`executeFixed`). */
const metadataColumns = `id::text AS id, business_object AS "businessObject", state, version::text AS version, ${isoMicros("created_at")} AS "createdAt", ${isoMicros("updated_at")} AS "updatedAt"`

/** A record's columns under its field names. */
const columns = `${metadataColumns}, values`

/** A statement that returns the written record: decoded as one, and a defect if it is not there. */
const writtenRecord = <E, R>(statement: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
  statement.pipe(
    Effect.flatMap(decodeRows),
    Effect.flatMap((rows) =>
      rows[0] === undefined
        ? Effect.die(new Error("the statement returned no record"))
        : Effect.succeed(toRecord(rows[0]))
    ),
    Effect.orDie
  )

const MetadataRow = Schema.Struct({
  id: RecordRow.fields.id,
  businessObject: RecordRow.fields.businessObject,
  state: RecordRow.fields.state,
  version: RecordRow.fields.version,
  createdAt: RecordRow.fields.createdAt,
  updatedAt: RecordRow.fields.updatedAt
})
const decodeMetadataRows = Schema.decodeUnknownEffect(Schema.Array(MetadataRow))

const decodeKeyedRows = Schema.decodeUnknownEffect(
  Schema.Array(Schema.Struct({ ...RecordRow.fields, sortKey: Schema.NullOr(Schema.String) }))
)
const decodeCountedRows = Schema.decodeUnknownEffect(
  Schema.Array(Schema.Struct({ ...RecordRow.fields, total: Schema.Int }))
)

const LinkedRecord = Schema.Struct({ id: Schema.String, state: RecordState })
type LinkedRecord = typeof LinkedRecord.Type
const decodeLinked = Schema.decodeUnknownEffect(Schema.Array(LinkedRecord))
const decodeStates = Schema.decodeUnknownEffect(
  Schema.Array(Schema.Struct({ lookup: Schema.Int, ...LinkedRecord.fields }))
)

/**
 * A record a bulk create just wrote: a `StoredRecord`'s fields as a plain
 * object. Its class's constructor parses the values again (`JsonObject`, at
 * every depth, even with `disableChecks`), for each of a batch's thousand
 * records; nothing of a bulk write needs the class.
 */
export type WrittenRecord = Pick<
  StoredRecord,
  "id" | "businessObject" | "state" | "version" | "values" | "createdAt" | "updatedAt"
>

/** Records of one business object of one workspace whose states are asked for (`RecordStore.states`). */
export interface StatesLookup {
  readonly workspace: Workspace
  readonly businessObject: string
  readonly ids: ReadonlyArray<string>
}

const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const read = yield* ReadSqlClient
  // Presence asks for record states right after a record is made, without the maker's commit position.
  const primaryRead = yield* PrimaryReadSqlClient
  const table = (workspace: Workspace) => sql(workspace.table("records"))
  const records = (workspace: Workspace) => quotedName(workspace.table("records"))

  /** Ids are UUIDs: anything else names no record (and must not reach a uuid cast). */
  const isRecordId = (id: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)

  const find = (workspace: Workspace, businessObject: string, id: string, lock: boolean) =>
    isRecordId(id)
      ? executeFixed(
          lock ? sql : read,
          `SELECT ${columns} FROM ${records(workspace)} WHERE business_object = $1 AND id = $2${lock ? " FOR UPDATE" : ""}`,
          [businessObject, id]
        ).pipe(
          Effect.flatMap(decodeRows),
          Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), toRecord)),
          Effect.orDie
        )
      : Effect.succeed(Option.none<StoredRecord>())

  const insert = (workspace: Workspace, businessObject: string, state: RecordState, values: RecordValues) =>
    writtenRecord(
      executeFixed(
        sql,
        `INSERT INTO ${records(workspace)} (business_object, id, state, values) VALUES ($1, $2, $3, $4::jsonb)
        RETURNING ${columns}`,
        [businessObject, crypto.randomUUID(), state, JSON.stringify(values)]
      )
    )

  /**
   * Operational records of `businessObject`, one per values, in ONE
   * statement (the values travel as one JSON array): a bulk create's rows
   * cost one round trip, not one each. The records in the order given.
   * Their values are the ones given, not read back: a bulk write of 1,000
   * records would otherwise parse every one of them again (and keep both
   * copies until its unit ends); jsonb gives the same JSON back, its keys
   * in another order that neither the audit row nor its hash sees.
   */
  const insertMany = (workspace: Workspace, businessObject: string, values: ReadonlyArray<RecordValues>) => {
    if (values.length === 0) return Effect.succeed<ReadonlyArray<WrittenRecord>>([])
    const ids = values.map(() => crypto.randomUUID())
    return executeFixed(
      sql,
      `INSERT INTO ${records(workspace)} (business_object, id, state, values)
      SELECT $1, (r.value->>0)::uuid, 'operational', r.value->1 FROM jsonb_array_elements($2::jsonb) AS r
      RETURNING ${metadataColumns}`,
      [businessObject, JSON.stringify(values.map((one, index) => [ids[index], one]))]
    ).pipe(
      Effect.flatMap(decodeMetadataRows),
      Effect.flatMap((rows) => {
        const byId = new Map(rows.map((row) => [row.id, row]))
        const written = ids.flatMap((id, index) => {
          const row = byId.get(id)
          const given = values[index]
          return row === undefined || given === undefined ? [] : [{ ...row, values: given }]
        })
        return written.length === ids.length
          ? Effect.succeed<ReadonlyArray<WrittenRecord>>(written)
          : Effect.die(new Error(`the insert returned ${written.length} of ${ids.length} records`))
      }),
      Effect.orDie
    )
  }

  const setValues = (workspace: Workspace, record: StoredRecord, values: RecordValues) =>
    writtenRecord(
      executeFixed(
        sql,
        `UPDATE ${records(workspace)} SET values = $1::jsonb, version = version + 1, updated_at = now()
        WHERE business_object = $2 AND id = $3 RETURNING ${columns}`,
        [JSON.stringify(values), record.businessObject, record.id]
      )
    )

  const setState = (workspace: Workspace, record: StoredRecord, state: RecordState) =>
    writtenRecord(
      executeFixed(
        sql,
        `UPDATE ${records(workspace)} SET state = $1, version = version + 1, updated_at = now()
        WHERE business_object = $2 AND id = $3 RETURNING ${columns}`,
        [state, record.businessObject, record.id]
      )
    )

  const remove = (workspace: Workspace, record: StoredRecord) =>
    executeFixed(sql, `DELETE FROM ${records(workspace)} WHERE business_object = $1 AND id = $2`, [
      record.businessObject,
      record.id
    ]).pipe(Effect.asVoid, Effect.orDie)

  /**
   * The records of `businessObject` among `ids` (their id and state),
   * share-locked for the rest of the transaction so that none can be deleted
   * or archived before the linking write commits. Locked in id order.
   */
  const lockLinked = (workspace: Workspace, businessObject: string, ids: ReadonlyArray<string>) => {
    const valid = ids.filter(isRecordId)
    return valid.length === 0
      ? Effect.succeed<ReadonlyArray<LinkedRecord>>([])
      : sql`SELECT id::text AS id, state FROM ${table(workspace)}
            WHERE business_object = ${businessObject} AND id IN ${sql.in(valid)}
            ORDER BY id FOR KEY SHARE`.pipe(Effect.flatMap(decodeLinked), Effect.orDie)
  }

  /** The id and state of the records of `businessObject` among `ids`, in one statement; no lock, no values. */
  /**
   * The states of records, for several lookups (of any workspaces and
   * business objects) in one statement: a `UNION ALL` of one branch per
   * lookup, so the heartbeats of many workspaces that arrive together cost
   * one round trip. One list per lookup, in order; ids that are not record
   * ids, or not found, are left out.
   */
  const states = (lookups: ReadonlyArray<StatesLookup>) => {
    const branches = lookups.flatMap((lookup, index) => {
      const valid = [...new Set(lookup.ids.filter(isRecordId))]
      return valid.length === 0
        ? []
        : [
            primaryRead`SELECT ${index}::int AS lookup, id::text AS id, state FROM ${table(lookup.workspace)}
              WHERE business_object = ${lookup.businessObject} AND id IN ${sql.in(valid)}`
          ]
    })
    const found: Array<Array<LinkedRecord>> = lookups.map(() => [])
    if (branches.length === 0) return Effect.succeed<ReadonlyArray<ReadonlyArray<LinkedRecord>>>(found)
    return primaryRead`${primaryRead.join(" UNION ALL ", false)(branches)}`.pipe(
      Effect.flatMap(decodeStates),
      Effect.map((rows) => {
        for (const { lookup, id, state } of rows) found[lookup]?.push({ id, state })
        return found
      }),
      Effect.orDie
    )
  }

  const list = (workspace: Workspace, businessObject: string, limit: number) =>
    executeFixed(
      read,
      `SELECT ${columns} FROM ${records(workspace)} WHERE business_object = $1 ORDER BY created_at DESC, id LIMIT $2`,
      [businessObject, limit]
    ).pipe(
      Effect.flatMap(decodeRows),
      Effect.map((rows) => rows.map(toRecord)),
      Effect.orDie
    )

  /** One page of a planned list (`ListPlan`): one row more than the limit, to tell whether more follow. */
  const page = (workspace: Workspace, businessObject: string, plan: ListPlan) =>
    executeFixed(
      read,
      `SELECT ${columns}, ${plan.key} AS "sortKey" FROM ${records(workspace)}
      WHERE ${["business_object = $1", ...plan.where].join(" AND ")}
      ORDER BY ${plan.orderBy} LIMIT ${plan.limit + 1}`,
      [businessObject, ...plan.params]
    ).pipe(
      Effect.flatMap(decodeKeyedRows),
      Effect.map((rows) => {
        const shown = rows.slice(0, plan.limit)
        const last = shown.at(-1)
        return {
          records: shown.map(({ sortKey: _, ...row }) => toRecord(row)),
          next: rows.length > plan.limit && last !== undefined ? { key: last.sortKey, id: last.id } : undefined
        }
      }),
      Effect.orDie
    )

  /**
   * The records of `businessObject` whose top-level `field` holds `id`, newest
   * first, at most `limit`, and how many there are in all.
   */
  const linking = (workspace: Workspace, businessObject: string, field: string, id: string, limit: number) =>
    executeFixed(
      read,
      `SELECT ${columns}, count(*) OVER ()::int AS total FROM ${records(workspace)}
      WHERE business_object = $1 AND values @> $2::jsonb ORDER BY updated_at DESC, id DESC LIMIT $3`,
      [businessObject, JSON.stringify(Object.fromEntries([[field, id]])), limit]
    ).pipe(
      Effect.flatMap(decodeCountedRows),
      Effect.map((rows) => ({
        records: rows.map(({ total: _, ...row }) => toRecord(row)),
        total: rows[0]?.total ?? 0
      })),
      Effect.orDie
    )

  return { find, insert, insertMany, setValues, setState, remove, list, page, linking, lockLinked, states } as const
})

/** Plain SQL over `<workspace>.records`; no rules, no events: `Records` adds those. */
export class RecordStore extends Context.Service<RecordStore, Effect.Success<typeof make>>()("RecordStore") {
  static readonly layer = Layer.effect(RecordStore, make)
}
