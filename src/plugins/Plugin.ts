import type { Effect } from "effect"
import type { Operation } from "../api/Cause"
import type { RecordValues } from "../api/Json"
import type { BusinessObjectEvent } from "../events/BusinessObjectEvent"
import type { CommittedEvent } from "../events/CommittedEvent"
import type { Fields } from "../api/Field"
import type { PluginJobs } from "./PluginJobs"
import type { PluginRecords, WriteError } from "./PluginRecords"
import type { StoredRecord } from "../api/StoredRecord"

/** What plugin code runs with: records and jobs of the unit of work in progress. */
export type PluginEffect<A> = Effect.Effect<A, WriteError, PluginRecords | PluginJobs>

/** An action on one record, run inside an action frame (so every write it causes has a cause). */
export interface ActionDeclaration {
  /** What a person reads on the button and in a cause ("Close deal"); the action's name is one hover away. */
  readonly label: string
  readonly description: string
  readonly run: (target: StoredRecord) => PluginEffect<StoredRecord>
}

/** One business object type as a plugin declares it. */
export interface BusinessObjectDeclaration {
  /** The type as a person names one of them ("Company"). */
  readonly label: string
  /**
   * What names a record where a person reads it (timelines, Activity, lists,
   * link values): a top-level string field's name, or a template whose
   * `{field}` placeholders are filled from the record's values.
   */
  readonly title: string
  readonly fields: Fields
  /**
   * The fields a list of these records shows, in order (top-level scalar
   * fields; docs/fields.md, "Columns"). None: the list shows the title only.
   */
  readonly columns?: ReadonlyArray<string>
  readonly actions?: { readonly [name: string]: ActionDeclaration }
}

/**
 * Runs inside the unit of work for every matching event, in an event frame:
 * what it writes names the event as its cause. Its failure fails the unit.
 */
export interface ListenerDeclaration {
  readonly name: string
  /** What a person reads for it ("Count won deals on the company"). */
  readonly label: string
  readonly businessObject: string
  readonly operations: ReadonlyArray<Operation>
  readonly run: (event: BusinessObjectEvent) => PluginEffect<void>
}

/**
 * A background job `<namespace>/<name>`: run by a worker in its own unit of
 * work, as the actor who enqueued it, in a job frame. A failure rolls that
 * unit back and the job is tried again later.
 */
export interface JobDeclaration {
  /** What a person reads for it ("Follow up"). */
  readonly label: string
  readonly description: string
  readonly run: (payload: RecordValues) => PluginEffect<void>
}

/**
 * A workflow `<namespace>/<id>`, started by the engine for every committed
 * event that matches its trigger, after the commit, durably. It writes as
 * `{kind: system, name: workflow:<namespace>/<id>}` with the event as cause.
 */
export interface WorkflowDeclaration {
  readonly id: string
  /** What a person reads for it ("Note on archived deals"). */
  readonly label: string
  readonly trigger: { readonly businessObject: string; readonly operations: ReadonlyArray<Operation> }
  readonly run: (event: CommittedEvent) => PluginEffect<void>
}

/**
 * One record of a plugin's seed data, written once per workspace as
 * `{kind: system, name: seeder:<namespace>}`. `values` may refer to records
 * seeded before it by their keys.
 */
export interface SeedItem {
  readonly key: string
  readonly businessObject: string
  readonly values: (idOf: (key: string) => string) => RecordValues
}

/** A plugin: a namespace, the business object types it brings, and what runs on them. */
export interface Plugin {
  readonly namespace: string
  /** The plugin as a person names it ("CRM"): its seeder reads "Seed data (CRM)". */
  readonly label: string
  readonly businessObjects: { readonly [name: string]: BusinessObjectDeclaration }
  readonly listeners?: ReadonlyArray<ListenerDeclaration>
  readonly jobs?: { readonly [name: string]: JobDeclaration }
  readonly workflows?: ReadonlyArray<WorkflowDeclaration>
  readonly seed?: ReadonlyArray<SeedItem>
}
