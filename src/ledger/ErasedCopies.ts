import { SqlClient } from "effect/sql"
import { Effect } from "effect"
import { isJsonArray, isJsonObject } from "../api/Json"
import type { Json, JsonObject } from "../api/Json"
import { own } from "../api/own"
import type { Workspace } from "../api/Workspace"
import type { FieldPath } from "../chain/erase"
import { queueTable } from "../tenancy/migrations/durableQueue"
import { withoutPaths } from "./erasurePaths"
import { parseJson } from "../json/parseJson"

/** The record whose values are erased, and which of them. */
export interface ErasedTarget {
  readonly workspace: Workspace
  readonly businessObject: string
  readonly id: string
  readonly paths: ReadonlyArray<FieldPath>
}

const parsed = (text: string): Json | undefined => {
  try {
    const value: Json = parseJson(text)
    return value
  } catch {
    return undefined
  }
}

/** `value` with every copy of the record (an object with its `id`, `businessObject` and `values`) erased. */
const scrubRecords = (value: Json, target: ErasedTarget): Json => {
  if (isJsonArray(value)) return value.map((item) => scrubRecords(item, target))
  if (!isJsonObject(value)) return value
  const values = own(value, "values")
  const isTheRecord =
    own(value, "id") === target.id && own(value, "businessObject") === target.businessObject && isJsonObject(values)
  return Object.fromEntries(
    Object.entries(value).map(([key, member]) => [
      key,
      isTheRecord && key === "values" && isJsonObject(member)
        ? withoutPaths(member, target.paths)
        : scrubRecords(member, target)
    ])
  )
}

/**
 * The stored first answers of idempotent writes (`idempotency_keys`) that
 * hold the record: each copy of it has the values taken out. Such a key's
 * request may have carried a value too, and its `request_hash` is a hash of
 * that body a guess could be checked against: it is replaced, so a retry
 * with the key is refused (422, "already used with another body"), never
 * run twice nor answered with the value.
 */
export const scrubIdempotentAnswers = (target: ErasedTarget) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const table = sql(target.workspace.table("idempotency_keys"))
    const rows = yield* sql<{ readonly principal: string; readonly key: string; readonly response: string }>`
      SELECT principal, key, response FROM ${table}
      WHERE response IS NOT NULL AND strpos(response, ${target.id}) > 0 FOR UPDATE`
    let scrubbed = 0
    for (const row of rows) {
      const answer = parsed(row.response)
      if (answer === undefined) continue
      const text = JSON.stringify(scrubRecords(answer, target))
      if (text === JSON.stringify(answer)) continue
      yield* sql`UPDATE ${table} SET response = ${text}, request_hash = 'erased'
        WHERE principal = ${row.principal} AND key = ${row.key}`
      scrubbed++
    }
    return scrubbed
  }).pipe(Effect.orDie)

/** A workflow run's event, when it is one of the record's. */
const eventOf = (element: Json, target: ErasedTarget): JsonObject | undefined => {
  if (!isJsonObject(element)) return undefined
  const workspace = own(element, "workspace")
  const event = own(element, "event")
  if (!isJsonObject(workspace) || own(workspace, "id") !== target.workspace.id || !isJsonObject(event)) return undefined
  return own(event, "businessObject") === target.businessObject && own(event, "businessObjectId") === target.id
    ? event
    : undefined
}

const scrubSide = (side: Json | undefined, target: ErasedTarget): Json =>
  side !== undefined && isJsonObject(side) ? withoutPaths(side, target.paths) : (side ?? null)

/**
 * The workflow runs in the durable queue on an event of the record (waiting,
 * done or failed: the queue keeps them a while) with the values taken out
 * of the event's `before` and `after`; a run still to come sees the record
 * without them. The queue table is shared by every workspace: a run is the
 * record's only when its envelope names this workspace.
 */
export const scrubQueuedRuns = (target: ErasedTarget) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const table = sql(queueTable)
    const rows = yield* sql<{ readonly sequence: string; readonly element: string }>`
      SELECT sequence::text AS sequence, element FROM ${table} WHERE strpos(element, ${target.id}) > 0 FOR UPDATE`
    let scrubbed = 0
    for (const row of rows) {
      const element = parsed(row.element)
      if (element === undefined || !isJsonObject(element)) continue
      const event = eventOf(element, target)
      if (event === undefined) continue
      const erased = {
        ...element,
        event: {
          ...event,
          before: scrubSide(own(event, "before"), target),
          after: scrubSide(own(event, "after"), target)
        }
      }
      const text = JSON.stringify(erased)
      if (text === JSON.stringify(element)) continue
      yield* sql`UPDATE ${table} SET element = ${text} WHERE sequence = ${row.sequence}::int`
      scrubbed++
    }
    return scrubbed
  }).pipe(Effect.orDie)
