import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { ReadSqlClient } from "../db/Database"
import type { RecordValues } from "../api/Json"
import { StoredRecord } from "../api/StoredRecord"
import type { RecordState } from "../api/StoredRecord"
import type { Workspace } from "../api/Workspace"

const isoMicros = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`

/** A row as the driver returns it: a bigint (the version) comes as a string. */
const RecordRow = Schema.Struct({ ...StoredRecord.fields, version: Schema.NumberFromString.pipe(Schema.int()) })

const decodeRecord = (row: unknown) =>
  Effect.map(Schema.decodeUnknown(RecordRow)(row), (fields) => new StoredRecord(fields))

/** Plain SQL over `<workspace>.records`; no rules, no events: `Records` adds those. */
export class RecordStore extends Effect.Service<RecordStore>()("RecordStore", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const read = yield* ReadSqlClient
    const columns = sql.literal(
      `id::text AS id, business_object, state, version::text AS version, values, ${isoMicros("created_at")} AS created_at, ${isoMicros("updated_at")} AS updated_at`
    )
    const table = (workspace: Workspace) => sql(workspace.table("records"))
    const one = (rows: ReadonlyArray<unknown>) =>
      rows[0] === undefined ? Effect.succeed(Option.none()) : Effect.map(decodeRecord(rows[0]), Option.some)

    /** Ids are UUIDs: anything else names no record (and must not reach a uuid cast). */
    const isRecordId = (id: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)

    const find = (workspace: Workspace, businessObject: string, id: string, lock: boolean) =>
      isRecordId(id)
        ? (lock ? sql : read)`SELECT ${columns} FROM ${table(workspace)}
              WHERE business_object = ${businessObject} AND id = ${id} ${lock ? sql.literal("FOR UPDATE") : sql.literal("")}`.pipe(
            Effect.flatMap(one),
            Effect.orDie
          )
        : Effect.succeed(Option.none<StoredRecord>())

    const insert = (workspace: Workspace, businessObject: string, state: RecordState, values: RecordValues) =>
      sql`INSERT INTO ${table(workspace)} (business_object, id, state, values)
          VALUES (${businessObject}, ${crypto.randomUUID()}, ${state}, ${JSON.stringify(values)}::jsonb)
          RETURNING ${columns}`.pipe(Effect.flatMap((rows) => decodeRecord(rows[0])))

    const setValues = (workspace: Workspace, record: StoredRecord, values: RecordValues) =>
      sql`UPDATE ${table(workspace)} SET values = ${JSON.stringify(values)}::jsonb, version = version + 1, updated_at = now()
          WHERE business_object = ${record.businessObject} AND id = ${record.id}
          RETURNING ${columns}`.pipe(Effect.flatMap((rows) => decodeRecord(rows[0])))

    const setState = (workspace: Workspace, record: StoredRecord, state: RecordState) =>
      sql`UPDATE ${table(workspace)} SET state = ${state}, version = version + 1, updated_at = now()
          WHERE business_object = ${record.businessObject} AND id = ${record.id}
          RETURNING ${columns}`.pipe(Effect.flatMap((rows) => decodeRecord(rows[0])))

    const remove = (workspace: Workspace, record: StoredRecord) =>
      sql`DELETE FROM ${table(workspace)} WHERE business_object = ${record.businessObject} AND id = ${record.id}`.pipe(
        Effect.asVoid
      )

    const list = (workspace: Workspace, businessObject: string, limit: number) =>
      read`SELECT ${columns} FROM ${table(workspace)} WHERE business_object = ${businessObject}
          ORDER BY created_at DESC, id LIMIT ${limit}`.pipe(
        Effect.flatMap((rows) => Effect.forEach(rows, decodeRecord)),
        Effect.orDie
      )

    return { find, insert, setValues, setState, remove, list } as const
  })
}) {}
