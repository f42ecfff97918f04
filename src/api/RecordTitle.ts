import { Schema } from "effect"

/**
 * What names a record where a person reads it (docs/titles.md): its title by
 * its business object's rule, today's, or the last one it had when it is
 * deleted (`deleted: true`; erased values leave "Untitled <type>").
 */
export const RecordTitle = Schema.Struct({
  title: Schema.String,
  deleted: Schema.Boolean
}).annotate({ identifier: "RecordTitle" })
export type RecordTitle = typeof RecordTitle.Type

/**
 * Titles by record id: of the records a record's or an audit row's link
 * values point to (and, on an audit row, of its own record and of the record
 * its event cause names). An id the map lacks is a record never seen.
 */
export const RecordTitles = Schema.Record(Schema.String, RecordTitle).annotate({
  identifier: "RecordTitles",
  description: "Titles of the records this object's link values (and an audit row's own record and cause) name, by id"
})
export type RecordTitles = typeof RecordTitles.Type

/**
 * The human names of what a plugin brings besides its business objects, by
 * technical name, for a page to show with the technical name one hover away:
 * system actors (`seeder:crm` -> "Seed data (CRM)", `workflow:crm/x` ->
 * "Workflow: …"), jobs (`crm/follow-up`), actions (`crm/deal/close`) and
 * listeners (`crm/count-won-deals`).
 */
export const PluginLabels = Schema.Struct({
  actors: Schema.Record(Schema.String, Schema.String),
  jobs: Schema.Record(Schema.String, Schema.String),
  actions: Schema.Record(Schema.String, Schema.String),
  listeners: Schema.Record(Schema.String, Schema.String)
}).annotate({ identifier: "PluginLabels" })
export type PluginLabels = typeof PluginLabels.Type
