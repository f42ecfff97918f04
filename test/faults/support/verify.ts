import { Effect, Option, Schema } from "effect"
import type { AuditEntry } from "../../../src/api/AuditEntry"
import { StoredRecord } from "../../../src/api/StoredRecord"
import { applyChanges } from "../../../src/diff"
import { compact, jsonEquals } from "../../../src/api/Json"
import type { Json, JsonObject } from "../../../src/api/Json"
import { isValueChange } from "../../../src/api/Changes"
import { isJsonObject } from "../../../src/api/Json"
import type { Fields } from "../../../src/api/Field"
import { crm } from "../../../src/plugins/crm"
import { send } from "./recorder"
import type { Recorder } from "./recorder"
import { headersOf, pageOf, timelinePath, titleOfEntry } from "./traffic"
import type { Credential, LogicalWrite } from "./traffic"

const decodeRecord = Schema.decodeUnknownOption(StoredRecord)

const dealFields: Fields = crm.businessObjects.deal?.fields ?? {}

type FullEntry = Pick<AuditEntry, "id" | "operation" | "record" | "changes">

/** A record as it is at the end, and its whole timeline oldest first. */
export interface FinalRecord {
  readonly id: string
  readonly values: JsonObject | undefined
  readonly timeline: ReadonlyArray<FullEntry>
}

/** Reads a record and its whole timeline (pages of 200) over HTTP; fails if any read is not answered 200. */
export const readFinal = (recorder: Recorder, base: string, credential: Credential, id: string) =>
  Effect.gen(function* () {
    const record = yield* send(recorder, base, `/api/records/crm/deal/${id}`, {
      kind: "setup",
      headers: headersOf(credential)
    })
    if (record.status !== 200)
      return yield* Effect.fail(new Error(`GET deal ${id}: ${String(record.status)} ${JSON.stringify(record.body)}`))
    const stored = decodeRecord(record.body)
    if (Option.isNone(stored))
      return yield* Effect.fail(new Error(`GET deal ${id}: not a record: ${JSON.stringify(record.body).slice(0, 200)}`))
    const entries: Array<FullEntry> = []
    let cursor: string | null = null
    for (let pages = 0; pages < 10_000; pages++) {
      const query: string = `?limit=200${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`
      const page = yield* send(recorder, base, `${timelinePath(id)}${query}`, {
        kind: "setup",
        headers: headersOf(credential)
      })
      if (page.status !== 200)
        return yield* Effect.fail(new Error(`timeline of ${id}: ${String(page.status)} ${JSON.stringify(page.body)}`))
      const decoded = pageOf(page.body)
      if (decoded === undefined)
        return yield* Effect.fail(
          new Error(`timeline of ${id}: not a page: ${JSON.stringify(page.body).slice(0, 200)}`)
        )
      entries.push(...decoded.entries)
      cursor = decoded.nextCursor
      if (cursor === null) break
    }
    return { id, values: stored.value.values, timeline: entries.reverse() } satisfies FinalRecord
  })

export interface ReplayResult {
  readonly record: string
  readonly entries: number
  /** Why the replay does not reach the record; empty when it does. */
  readonly problems: ReadonlyArray<string>
  /** Updates whose `from` differs from the state before them. */
  readonly brokenLinks: number
  /** The replayed state right after each row that carries a title (what that write left). */
  readonly stateAfter: ReadonlyMap<string, JsonObject>
}

const show = (value: Json | undefined) => JSON.stringify(value ?? null).slice(0, 80)

/**
 * Replays a timeline oldest first: the created snapshot, then each update's
 * changes; each update's `from` must equal the state before it, and the end
 * must equal the record.
 */
export const replay = (record: FinalRecord): ReplayResult => {
  const problems: Array<string> = []
  let brokenLinks = 0
  const stateAfter = new Map<string, JsonObject>()
  const [first, ...rest] = record.timeline
  if (first === undefined || first.operation !== "created" || first.record === undefined) {
    return {
      record: record.id,
      entries: record.timeline.length,
      problems: [`timeline does not open with created (${first?.operation ?? "empty"})`],
      brokenLinks,
      stateAfter
    }
  }
  let state: JsonObject = first.record
  const created = titleOfEntry(first)
  if (created !== undefined) stateAfter.set(created, state)
  for (const entry of rest) {
    if (entry.operation !== "updated" || entry.changes === undefined) {
      problems.push(`unexpected ${entry.operation} row ${entry.id}`)
      continue
    }
    const mismatches = Object.entries(entry.changes).filter(
      ([field, change]) => isValueChange(change) && !jsonEquals(change.from, state[field])
    )
    if (mismatches.length > 0) {
      brokenLinks++
      if (problems.length < 5) {
        const [field, change] = mismatches[0] ?? []
        const from = change !== undefined && isValueChange(change) ? change.from : null
        problems.push(
          `row ${entry.id}: ${String(field)}.from ${show(from)} but the state before was ${show(field === undefined ? null : state[field])}`
        )
      }
    }
    state = applyChanges(dealFields, state, entry.changes)
    const title = titleOfEntry(entry)
    if (title !== undefined) stateAfter.set(title, state)
  }
  if (record.values === undefined || !jsonEquals(compact(state), compact(record.values))) {
    problems.push(`replay ends at ${show(state)}, the record is ${show(record.values)}`)
  }
  return { record: record.id, entries: record.timeline.length, problems, brokenLinks, stateAfter }
}

const decimal = /^-?\d+(\.\d+)?$/

/** Equal as JSON, or the same decimal written two ways ("100.00" and "100"). */
const sameValue = (a: Json | undefined, b: Json | undefined): boolean =>
  jsonEquals(a, b) ||
  (typeof a === "string" && typeof b === "string" && decimal.test(a) && decimal.test(b) && Number(a) === Number(b))

export interface DurabilityResult {
  /** Acknowledged writes with no audit row on their record. */
  readonly lost: ReadonlyArray<string>
  /** Writes (acknowledged or not) whose row appears more than once: committed twice. */
  readonly doubled: ReadonlyArray<string>
  /** Acknowledged creates whose record is missing. */
  readonly missingRecords: ReadonlyArray<string>
  /** Acknowledged writes whose row does not leave the values they sent (in the replayed state right after it, on timelines that replay). */
  readonly notApplied: ReadonlyArray<string>
}

/** Every acknowledged write has its row; no write has two. */
export const durability = (
  writes: ReadonlyArray<LogicalWrite>,
  records: ReadonlyArray<FinalRecord>,
  replays: ReadonlyArray<ReplayResult>
): DurabilityResult => {
  // Only timelines that replay cleanly say what a write left; the others fail the replay check already.
  const stateAfter = new Map<string, JsonObject>()
  for (const r of replays)
    if (r.problems.length === 0) for (const [title, state] of r.stateAfter) stateAfter.set(title, state)
  const rows = new Map<string, number>()
  for (const record of records) {
    for (const entry of record.timeline) {
      const title = titleOfEntry(entry)
      if (title !== undefined) rows.set(title, (rows.get(title) ?? 0) + 1)
    }
  }
  const known = new Set(records.map((r) => r.id))
  const acknowledged = writes.filter((w) => w.outcome === "acknowledged")
  return {
    lost: acknowledged.filter((w) => (rows.get(w.title) ?? 0) === 0).map((w) => w.title),
    doubled: [...rows].filter(([, n]) => n > 1).map(([title]) => title),
    missingRecords: acknowledged
      .filter((w) => w.kind === "create" && (w.recordId === undefined || !known.has(w.recordId)))
      .map((w) => w.title),
    notApplied: acknowledged
      .filter((w) => {
        const state = stateAfter.get(w.title)
        if (state === undefined) return false // lost, or on a timeline that does not replay
        return Object.entries(w.values).some(([field, value]) => !sameField(state[field], value))
      })
      .map((w) => w.title)
  }
}

/** A struct compares member by member (null = absent); anything else as a value. */
const sameField = (actual: Json | undefined, sent: Json): boolean => {
  if (isJsonObject(sent)) {
    const members = isJsonObject(actual) ? actual : {}
    return Object.entries(sent).every(([key, value]) => sameValue(members[key], value))
  }
  return sameValue(actual, sent)
}
