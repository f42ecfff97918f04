import { Duration, Effect, Fiber, Option, Ref, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { TimelinePage } from "../../../src/api/AuditEntry"
import type { AuditEntry } from "../../../src/api/AuditEntry"
import type { JsonObject } from "../../../src/api/Json"
import { isOk, send } from "./recorder"
import type { Exchange, Recorder } from "./recorder"

/** How a writer signs its requests: an API key, or a session cookie with the service's own Origin. */
export type Credential =
  | { readonly kind: "apiKey"; readonly key: string }
  | { readonly kind: "cookie"; readonly cookie: string; readonly origin: string }

export const headersOf = (credential: Credential): Record<string, string> =>
  credential.kind === "apiKey"
    ? { authorization: `Bearer ${credential.key}` }
    : { cookie: credential.cookie, origin: credential.origin }

export const dealPath = "/api/records/crm/deal"
export const timelinePath = (id: string) => `/api/audit/business-object/${encodeURIComponent("crm/deal")}/${id}`

/** One write a writer meant to make, with every attempt it took (retries keep the Idempotency-Key and body). */
export interface LogicalWrite {
  readonly key: string
  readonly kind: "create" | "update"
  readonly writer: number
  /** Unique per write: how its audit row is recognised. */
  readonly title: string
  readonly values: JsonObject
  /** The updated record; for a create, the record it made once acknowledged. */
  recordId: string | undefined
  readonly attempts: Array<Exchange>
  /** `performance`-clock ms when the 2xx arrived. */
  acknowledgedAt: number | undefined
  outcome: "pending" | "acknowledged" | "refused" | "unknown"
}

export interface TrafficOptions {
  readonly base: string
  readonly recorder: Recorder
  readonly credentials: ReadonlyArray<Credential>
  readonly writers: number
  /** The shared records the writers update and the reader pages. */
  readonly records: ReadonlyArray<string>
  /** Picks the record an update goes to; default: any shared record, uniformly. */
  readonly pickRecord?: (writer: number) => string
  /** Share of writes that create a new deal instead of updating a shared one. */
  readonly createShare: number
  /** Page size of the paging reader. */
  readonly pageLimit: number
}

const stages = ["open", "qualified", "proposal", "negotiation"] as const
const cities = ["Lisbon", "Oslo", "Turin", null] as const

const pick = <A>(items: readonly [A, ...Array<A>]): A => items[Math.floor(Math.random() * items.length)] ?? items[0]

const amount = () =>
  `${Math.floor(Math.random() * 100_000)}.${String(Math.floor(Math.random() * 100)).padStart(2, "0")}`

/** What the paging reader saw in one full pass over a record's timeline. */
export interface ReaderPass {
  readonly record: string
  readonly startedAt: number
  readonly pages: number
  readonly entries: number
  /** Titles acknowledged before the pass began that the pass did not show. */
  readonly missed: ReadonlyArray<string>
  /** Entry ids the pass showed more than once. */
  readonly duplicates: ReadonlyArray<string>
  /** Entry ids in the order shown, newest first. */
  readonly ids: ReadonlyArray<string>
}

export interface Traffic {
  readonly writes: Array<LogicalWrite>
  readonly passes: Array<ReaderPass>
  /** The newest page of each shared record, polled one after another (ids newest first). */
  readonly heads: Array<ReaderPass>
  /** Passes given up because a page was not answered 200 (during a fault). */
  readonly abortedPasses: Effect.Effect<number>
  /** Stops starting new writes and passes, then waits (bounded) for the ones under way. */
  readonly stop: Effect.Effect<void, Error>
}

/** A timeline page as the service's own schema reads it; undefined for anything else. */
export const pageOf = (body: unknown): TimelinePage | undefined => Option.getOrUndefined(decodePage(body))
const decodePage = Schema.decodeUnknownOption(TimelinePage)

/** The title an audit row records: the created snapshot's, or an update's new one. */
export const titleOfEntry = (entry: Pick<AuditEntry, "operation" | "record" | "changes">): string | undefined => {
  const change = entry.changes?.title
  const title =
    entry.operation === "created" ? entry.record?.title : change !== undefined && "to" in change ? change.to : undefined
  return typeof title === "string" ? title : undefined
}

/**
 * Concurrent writers and one paging reader, recording every exchange.
 * A writer retries a write that got 503, 429 or 409 (after Retry-After,
 * kept within 0.1-1 s) or no answer (after 200 ms) with the same
 * Idempotency-Key and body, until it is answered or 30 s after the stop.
 */
export const startTraffic = (options: TrafficOptions) =>
  Effect.gen(function* () {
    const { base, recorder } = options
    const stopped = yield* Ref.make(false)
    const stopAt = yield* Ref.make<number | undefined>(undefined)
    const aborted = yield* Ref.make(0)
    const writes: Array<LogicalWrite> = []
    const passes: Array<ReaderPass> = []
    const heads: Array<ReaderPass> = []
    let counter = 0

    const anyRecord = () => options.records[Math.floor(Math.random() * options.records.length)]
    const perform = (write: LogicalWrite, credential: Credential) =>
      Effect.gen(function* () {
        const path = write.kind === "create" ? dealPath : `${dealPath}/${write.recordId}`
        for (;;) {
          const exchange = yield* send(recorder, base, path, {
            kind: write.kind,
            method: write.kind === "create" ? "POST" : "PATCH",
            headers: { ...headersOf(credential), "idempotency-key": write.key },
            json: { values: write.values }
          })
          write.attempts.push(exchange)
          if (isOk(exchange)) {
            write.acknowledgedAt = exchange.endedAt
            write.outcome = "acknowledged"
            if (write.kind === "create") {
              const body = exchange.body
              if (typeof body === "object" && body !== null && "id" in body && typeof body.id === "string")
                write.recordId = body.id
            }
            return
          }
          // 409: the same Idempotency-Key still in progress (a retry after a cut connection).
          const retriable =
            exchange.status === undefined ||
            exchange.status === 503 ||
            exchange.status === 429 ||
            exchange.status === 409
          if (!retriable) {
            write.outcome = exchange.status !== undefined && exchange.status < 500 ? "refused" : "unknown"
            return
          }
          const stop = yield* Ref.get(stopAt)
          if (stop !== undefined && recorder.now() > stop + 30_000) {
            write.outcome = "unknown"
            return
          }
          const hinted = exchange.retryAfter === null ? Number.NaN : Number(exchange.retryAfter)
          const wait =
            exchange.status === undefined
              ? 200
              : Number.isFinite(hinted)
                ? Math.min(Math.max(hinted * 1000, 100), 1000)
                : 500
          yield* Effect.sleep(Duration.millis(wait))
        }
      })

    const writer = (index: number) =>
      Effect.gen(function* () {
        const credential = options.credentials[index % options.credentials.length]
        if (credential === undefined) return yield* Effect.die(new Error("no credentials"))
        while (!(yield* Ref.get(stopped))) {
          const create = Math.random() < options.createShare
          const title = `w${index}-${++counter}`
          const values: JsonObject = create
            ? { title, stage: "open", amount: amount() }
            : { title, amount: amount(), stage: pick(stages), address: { city: pick(cities), country: "PT" } }
          const write: LogicalWrite = {
            key: randomUUID(),
            kind: create ? "create" : "update",
            writer: index,
            title,
            values,
            recordId: create ? undefined : (options.pickRecord ?? anyRecord)(index),
            attempts: [],
            acknowledgedAt: undefined,
            outcome: "pending"
          }
          writes.push(write)
          yield* perform(write, credential)
        }
      })

    const readPass = (record: string, credential: Credential) =>
      Effect.gen(function* () {
        const startedAt = recorder.now()
        const expected = new Set(
          writes
            .filter((w) => w.recordId === record && w.acknowledgedAt !== undefined && w.acknowledgedAt < startedAt)
            .map((w) => w.title)
        )
        const seenIds = new Map<string, number>()
        const ids: Array<string> = []
        const seenTitles = new Set<string>()
        let cursor: string | null = null
        let pages = 0
        let entries = 0
        do {
          const query: string = `?limit=${options.pageLimit}${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`
          const exchange = yield* send(recorder, base, `${timelinePath(record)}${query}`, {
            kind: "page",
            headers: headersOf(credential)
          })
          const page = exchange.status === 200 ? pageOf(exchange.body) : undefined
          if (page === undefined) {
            yield* Ref.update(aborted, (n) => n + 1)
            return
          }
          pages++
          for (const entry of page.entries) {
            entries++
            seenIds.set(entry.id, (seenIds.get(entry.id) ?? 0) + 1)
            ids.push(entry.id)
            const title = titleOfEntry(entry)
            if (title !== undefined) seenTitles.add(title)
          }
          cursor = page.nextCursor
        } while (cursor !== null && pages < 10_000)
        passes.push({
          record,
          startedAt,
          pages,
          entries,
          missed: [...expected].filter((title) => !seenTitles.has(title)),
          duplicates: [...seenIds].filter(([, n]) => n > 1).map(([id]) => id),
          ids
        })
      })

    const reader = Effect.gen(function* () {
      const credential = options.credentials[0]
      if (credential === undefined) return
      let round = 0
      while (!(yield* Ref.get(stopped))) {
        const record = options.records[round++ % options.records.length]
        if (record === undefined) return
        const before = yield* Ref.get(aborted)
        yield* readPass(record, credential)
        // A pass given up during a fault: try again a little later rather than spin.
        if ((yield* Ref.get(aborted)) > before) yield* Effect.sleep("100 millis")
      }
    })

    // Polls only the newest page, as a client showing the latest rows would:
    // it sees late rows (committed below rows already shown) soonest.
    const headPoller = Effect.gen(function* () {
      const credential = options.credentials[0]
      if (credential === undefined) return
      let round = 0
      while (!(yield* Ref.get(stopped))) {
        const record = options.records[round++ % options.records.length]
        if (record === undefined) return
        const startedAt = recorder.now()
        const exchange = yield* send(recorder, base, `${timelinePath(record)}?limit=20`, {
          kind: "page",
          headers: headersOf(credential)
        })
        const page = exchange.status === 200 ? pageOf(exchange.body) : undefined
        if (page === undefined) {
          yield* Effect.sleep("100 millis")
          continue
        }
        const ids = page.entries.map((e) => e.id)
        heads.push({ record, startedAt, pages: 1, entries: ids.length, missed: [], duplicates: [], ids })
      }
    })

    const fibers = [
      ...(yield* Effect.forEach(
        Array.from({ length: options.writers }, (_, i) => i),
        (i) => Effect.forkChild(writer(i))
      )),
      yield* Effect.forkChild(reader),
      yield* Effect.forkChild(headPoller)
    ]

    const stop = Effect.gen(function* () {
      yield* Ref.set(stopAt, recorder.now())
      yield* Ref.set(stopped, true)
      yield* Fiber.joinAll(fibers).pipe(
        Effect.timeoutOrElse({
          duration: "60 seconds",
          orElse: () => Effect.fail(new Error("writers and reader did not finish within 60 s of the stop"))
        }),
        Effect.catchDefect((defect) => Effect.fail(new Error(`traffic failed: ${String(defect)}`)))
      )
    })

    return { writes, passes, heads, abortedPasses: Ref.get(aborted), stop } satisfies Traffic
  })

/**
 * Rows that a reader polling the head would never see: between two reads of
 * the newest rows of a record (whole passes, or newest pages), every new row
 * must come before (be newer than) every row the earlier read showed, since
 * the timeline follows commit order. A new row below an already-shown one
 * committed late with an older position. (No row is ever deleted, so a
 * newest page holds no unseen row below a seen one otherwise.)
 */
export const rowsBelowHead = (passes: ReadonlyArray<ReaderPass>) => {
  let late = 0
  let pairs = 0
  const previous = new Map<string, ReaderPass>()
  for (const pass of passes) {
    const before = previous.get(pass.record)
    previous.set(pass.record, pass)
    if (before === undefined) continue
    pairs++
    const known = new Set(before.ids)
    const firstKnown = pass.ids.findIndex((id) => known.has(id))
    if (firstKnown < 0) continue
    late += pass.ids.slice(firstKnown).filter((id) => !known.has(id)).length
  }
  return { late, pairs }
}
