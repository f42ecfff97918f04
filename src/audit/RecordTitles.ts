import { Context, Effect, Layer, Schema } from "effect"
import { AuditEntry } from "../api/AuditEntry"
import type { RecordTitle, RecordTitles as Titles } from "../api/RecordTitle"
import type { StoredRecord } from "../api/StoredRecord"
import type { Workspace } from "../api/Workspace"
import { ReadSqlClient } from "../db/Database"
import { PluginRegistry } from "../plugins/PluginRegistry"
import { isTemplate, templateFields } from "../plugins/recordTitle"
import type { TitleReference } from "./titleReferences"
import { entryReferences, valueReferences } from "./titleReferences"
import { fromJsonText } from "../json/fromJsonText"

const isRecordId = (id: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)

const Row = Schema.Struct({
  businessObject: Schema.String,
  id: Schema.String,
  deleted: Schema.Boolean,
  values: Schema.NullOr(Schema.Unknown)
})
const decodeRows = Schema.decodeUnknownEffect(Schema.Array(Row))
const decodeEntry = Schema.decodeUnknownEffect(fromJsonText(AuditEntry))

/** The business objects the caller may read (`readableBusinessObjects`): only their records' titles are told. */
type Readable = "all" | ReadonlyArray<string>

const keyOf = (reference: TitleReference) => `${reference.businessObject}\n${reference.id}`

/** The titles of `references` found in `found`, by id (an id never seen is left out). */
const pick = (found: ReadonlyMap<string, RecordTitle>, references: ReadonlyArray<TitleReference>): Titles =>
  Object.fromEntries(
    references.flatMap((reference) => {
      const title = found.get(keyOf(reference))
      return title === undefined ? [] : [[reference.id, title] as const]
    })
  )

const make = Effect.gen(function* () {
  const sql = yield* ReadSqlClient
  const registry = yield* PluginRegistry
  const fieldsOf = new Map(registry.businessObjects.map((definition) => [definition.name, definition.fields]))
  // Only the members titles are made of are read: a record's values may be large.
  const titleFields = [
    ...new Set(
      registry.businessObjects.flatMap(({ title }) =>
        title === undefined ? [] : isTemplate(title) ? templateFields(title) : [title]
      )
    )
  ]

  /**
   * Titles of the records named, in one statement: a live record's from its
   * values now; a deleted one's from the last snapshot its timeline holds
   * (its deletion's), marked deleted. Ids of no record at all are left out,
   * and so are records of business objects the caller may not read (`readable`).
   */
  const resolve = (workspace: Workspace, references: ReadonlyArray<TitleReference>, readable: Readable) =>
    Effect.gen(function* () {
      const mayRead = (ref: TitleReference) => readable === "all" || readable.includes(ref.businessObject)
      const wanted = [
        ...new Map(
          references.filter((ref) => isRecordId(ref.id) && mayRead(ref)).map((ref) => [keyOf(ref), ref])
        ).values()
      ]
      const found = new Map<string, RecordTitle>()
      if (wanted.length === 0) return found
      const rows = yield* sql`
        SELECT w.business_object, w.id, r.id IS NULL AS deleted,
          (SELECT jsonb_object_agg(m.key, m.value) FROM jsonb_each(coalesce(r.values, last.record)) AS m
            WHERE m.key = ANY (${titleFields}::text[])) AS values
        FROM unnest(${wanted.map((ref) => ref.businessObject)}::text[], ${wanted.map((ref) => ref.id)}::text[])
          AS w(business_object, id)
        LEFT JOIN ${sql(workspace.table("records"))} AS r
          ON r.business_object = w.business_object AND r.id = w.id::uuid
        LEFT JOIN LATERAL (
          SELECT e.record FROM ${sql(workspace.table("audit_entries"))} AS e
          WHERE r.id IS NULL AND e.business_object = w.business_object AND e.business_object_id = w.id
            AND e.record IS NOT NULL
          ORDER BY e.seq DESC LIMIT 1
        ) AS last ON true
        WHERE r.id IS NOT NULL OR last.record IS NOT NULL`.pipe(Effect.flatMap(decodeRows))
      for (const row of rows) {
        found.set(keyOf(row), { title: registry.titleOf(row.businessObject, row.values ?? {}), deleted: row.deleted })
      }
      return found
    }).pipe(Effect.orDie)

  /** The record with its title and the titles of the records it links to. */
  const titledRecord = (workspace: Workspace, record: StoredRecord, readable: Readable) =>
    Effect.map(titlesOfValues(workspace, record.businessObject, record.values, readable), (titles) =>
      withTitles<StoredRecord>(record, { title: registry.titleOf(record.businessObject, record.values), titles })
    )

  /** The titles of the records `values` (of a `businessObject` record) link to. */
  const titlesOfValues = (workspace: Workspace, businessObject: string, values: unknown, readable: Readable) => {
    const fields = fieldsOf.get(businessObject)
    const references = fields === undefined ? [] : valueReferences(fields, values)
    return Effect.map(resolve(workspace, references, readable), (found) => pick(found, references))
  }

  /** Records of one page, titled with one statement. */
  const titledRecords = (workspace: Workspace, records: ReadonlyArray<StoredRecord>, readable: Readable) =>
    Effect.gen(function* () {
      const per = records.map((record) => {
        const fields = fieldsOf.get(record.businessObject)
        return fields === undefined ? [] : valueReferences(fields, record.values)
      })
      const found = yield* resolve(workspace, per.flat(), readable)
      return records.map((record, index) =>
        withTitles(record, {
          title: registry.titleOf(record.businessObject, record.values),
          titles: pick(found, per[index] ?? [])
        })
      )
    })

  /** The titles each audit row names (`entryReferences`), for a page of rows, with one statement. */
  const titlesOfEntries = (workspace: Workspace, entries: ReadonlyArray<AuditEntry>, readable: Readable) =>
    Effect.gen(function* () {
      const per = entries.map((entry) => entryReferences(fieldsOf.get(entry.businessObject), entry))
      const found = yield* resolve(workspace, per.flat(), readable)
      return per.map((references) => pick(found, references))
    })

  /** Audit rows of one page, each with the titles it names. */
  const titledEntries = <E extends AuditEntry>(workspace: Workspace, entries: ReadonlyArray<E>, readable: Readable) =>
    Effect.map(titlesOfEntries(workspace, entries, readable), (titles) =>
      entries.map((entry, index) => withTitles(entry, { titles: titles[index] ?? {} }))
    )

  /**
   * Feed rows as JSON text (a stream's events) with the titles each names
   * added to its text, with one statement: the rest of the text is kept as
   * PostgreSQL built it.
   */
  const titledRows = <Row extends { readonly json: string }>(
    workspace: Workspace,
    rows: ReadonlyArray<Row>,
    readable: Readable
  ) =>
    Effect.gen(function* () {
      const entries = yield* Effect.forEach(rows, (row) => decodeEntry(row.json))
      const titles = yield* titlesOfEntries(workspace, entries, readable)
      return rows.map(
        (row, index): Row => ({
          ...row,
          json: `${row.json.slice(0, -1)},"titles":${JSON.stringify(titles[index] ?? {})}}`
        })
      )
    }).pipe(Effect.orDie)

  return {
    resolve,
    titledRecord,
    titledRecords,
    titlesOfValues,
    titlesOfEntries,
    titledEntries,
    titledRows,
    titleOf: registry.titleOf
  } as const
})

/** A copy of a schema class instance (a record, an audit row) with more of its own fields set; checked as it is encoded. */
const withTitles = <A extends object>(instance: A, titles: Partial<StoredRecord> | Partial<AuditEntry>): A =>
  Object.assign(Object.create(Object.getPrototypeOf(instance)), instance, titles)

/**
 * Titles where a person reads records (docs/titles.md): beside a record,
 * beside its link values, beside an audit row. Every answer's titles come
 * from one statement, however many records and rows it holds.
 */
export class RecordTitles extends Context.Service<RecordTitles, Effect.Success<typeof make>>()("RecordTitles") {
  static readonly layer = Layer.effect(RecordTitles, make)
}
