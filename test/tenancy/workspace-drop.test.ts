import { SqlClient } from "effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Fiber, Layer, Option, Predicate } from "effect"
import type { Workspace } from "../../src/api/Workspace"
import { ApiKeys } from "../../src/auth/ApiKeys"
import { queueName } from "../../src/queue/DurableQueues"
import { Workspaces } from "../../src/tenancy/Workspaces"
import { ended, eventually, hintId, opened } from "../broadcast/streamHelpers"
import { bearerClient, createRecord, signedInMember } from "../support/api"
import type { Client } from "../support/api"
import { runCli } from "../support/cli"
import { request } from "../support/http"
import { queuedIn } from "../support/queue"
import { openSse } from "../support/sse"
import type { SseStream } from "../support/sse"
import { baseUrl, testApp, testEngineToken, testServices, uniqueSuffix } from "../support/TestApp"
import type { Answered, Step, Traffic } from "../support/traffic"
import { trafficOf } from "../support/traffic"

const deal = "crm/deal"
/** Where a step needs a record and its loop has none (its create was refused): a record that does not exist. */
const none = "00000000-0000-7000-8000-000000000000"

/**
 * What a member keeps doing in a workspace, `credential` being its cookie or
 * key: a write of each kind (the follow-up enqueues a job, the archive starts
 * a workflow run) and a read of each route that resolves the workspace.
 */
const memberSteps = (credential: Record<string, string>): ReadonlyArray<Step> => [
  {
    name: "create",
    creates: true,
    send: (c) => c.post(`/api/records/${deal}`, { values: { title: "Going on", stage: "open" } })
  },
  { name: "update", send: (c, id) => c.patch(`/api/records/${deal}/${id ?? none}`, { values: { amount: "12.50" } }) },
  { name: "follow-up", send: (c, id) => c.post(`/api/actions/${deal}/follow-up`, { id: id ?? none }) },
  {
    name: "heartbeat",
    // Without a body, as a form sends it: the fast route takes it first.
    send: (c, id) =>
      request(`${c.base}/api/presence/${deal}/${id ?? none}/form-1`, { method: "PUT", headers: credential })
  },
  { name: "read", send: (c, id) => c.get(`/api/records/${deal}/${id ?? none}`) },
  { name: "timeline", send: (c, id) => c.get(`/api/audit/business-object/${encodeURIComponent(deal)}/${id ?? none}`) },
  { name: "archive", send: (c, id) => c.post(`/api/records/${deal}/${id ?? none}/archive`) },
  { name: "list", send: (c) => c.get(`/api/records/${deal}?limit=5`) },
  { name: "feed", send: (c) => c.get("/api/audit/feed?limit=5") },
  { name: "editors", send: (c) => c.get(`/api/presence/${deal}`) },
  { name: "members", send: (c) => c.get("/api/members") },
  { name: "business objects", send: (c) => c.get("/api/business-objects") },
  { name: "me", send: (c) => c.get("/api/auth/me") }
]

/** The workflow engine writing into a workspace it names by slug. */
const engineSteps = (slug: string): ReadonlyArray<Step> => [
  {
    name: "engine writes",
    send: (c) =>
      c.post(`/api/engine/workspaces/${slug}/writes`, {
        workflowId: "crm/note-archived-deal",
        trigger: { kind: "event", businessObject: deal, businessObjectId: none, operation: "archived" },
        writes: [{ tool: "create", businessObject: "crm/activity", values: { subject: "from the engine" } }]
      })
  }
]

type App = Context.Context<Layer.Success<ReturnType<typeof testApp>>>

interface Instance {
  readonly app: App
  readonly base: string
}

/** A workspace as it is used on one instance: its callers' loops and its member's open streams. */
interface InUse {
  readonly workspace: Workspace
  readonly instance: Instance
  readonly member: Client
  readonly loops: ReadonlyArray<Traffic>
  readonly broadcast: SseStream
  readonly feed: SseStream
}

/** A member, an API key and the engine working in `workspace` on `instance`; the member's broadcast and feed streams open. */
const use = (instance: Instance, workspace: Workspace, engine: boolean) =>
  Effect.gen(function* () {
    const { app, base } = instance
    const { client, cookie } = yield* Effect.provide(signedInMember(base, workspace), app)
    const { key } = yield* Effect.provide(
      ApiKeys.use((keys) => keys.create(workspace, "importer", "admin")),
      app
    )
    const broadcast = yield* openSse(`${base}/api/broadcast`, { cookie })
    const feed = yield* openSse(`${base}/api/audit/feed`, { cookie, accept: "text/event-stream" })
    yield* broadcast.waitFor((events) => events.length >= 1)
    const loops = [
      yield* trafficOf(client, memberSteps({ cookie })),
      yield* trafficOf(bearerClient(base, key), memberSteps({ authorization: `Bearer ${key}` })),
      ...(engine ? [yield* trafficOf(bearerClient(base, testEngineToken), engineSteps(workspace.slug))] : [])
    ]
    return { workspace, instance, member: client, loops, broadcast, feed } satisfies InUse
  })

/** Answers that break the rule: a 5xx other than 503, or a 503 without `Retry-After`. */
const broken = (answers: ReadonlyArray<Answered>) =>
  answers.filter((answer) => answer.status >= 500 && (answer.status !== 503 || answer.retryAfter === null))

const allAnswers = (uses: ReadonlyArray<InUse>) =>
  Effect.map(
    Effect.forEach(
      uses.flatMap((inUse) => inUse.loops),
      (loop) => loop.answers
    ),
    (all) => all.flat()
  )

/** The workspace's jobs and workflow runs not yet done, in the queues of `prefix`. */
const waitingWork = (workspace: Workspace, prefix: string) =>
  Effect.map(
    Effect.all([queuedIn(queueName(prefix, "jobs"), workspace), queuedIn(queueName(prefix, "workflows"), workspace)]),
    ([jobs, runs]) => [...jobs, ...runs].filter((element) => !element.completed)
  )

describe("admin workspace drop while the workspace is in use on two instances", () => {
  it.live(
    "every request is answered 2xx, 4xx or 503; its streams end (workspace-removed); its queued work is gone or done; another workspace goes on untouched",
    () =>
      Effect.gen(function* () {
        const queuePrefix = `test-${uniqueSuffix()}`
        const instances: ReadonlyArray<Instance> = yield* Effect.forEach([1, 2], () =>
          Effect.gen(function* () {
            const app: App = yield* Layer.build(testApp({ queuePrefix }))
            return { app, base: yield* Effect.provide(baseUrl, app) }
          })
        )
        const [a] = instances
        if (a === undefined) return yield* Effect.die("no instance")
        // The operator's command line: a process of its own, with its own caches, on the same PostgreSQL and Redis.
        const cli = yield* Layer.build(testServices({ queuePrefix }))
        const workspaces = Context.get(a.app, Workspaces)
        const create = Effect.acquireRelease(
          Effect.provide(
            Effect.suspend(() => workspaces.create(`t-${uniqueSuffix()}`)),
            a.app
          ),
          (workspace) =>
            Effect.flatMap(workspaces.findBySlug(workspace.slug), (found) =>
              Option.isSome(found) ? workspaces.drop(found.value) : Effect.void
            )
        )
        const leaving = yield* create
        const staying = yield* create

        const leavingUses = yield* Effect.forEach(instances, (instance) => use(instance, leaving, true))
        const stayingUses = yield* Effect.forEach(instances, (instance) => use(instance, staying, false))
        const uses = [...leavingUses, ...stayingUses]
        // Writes in flight everywhere, and work of the leaving workspace queued or running when the drop comes.
        yield* Effect.forEach(uses, (inUse) => Effect.forEach(inUse.loops, (loop) => loop.further(6)), {
          discard: true
        })
        yield* eventually(
          "workflow runs and jobs of the leaving workspace are queued",
          Effect.map(
            Effect.all([
              queuedIn(queueName(queuePrefix, "workflows"), leaving),
              queuedIn(queueName(queuePrefix, "jobs"), leaving)
            ]),
            ([runs, jobs]) => runs.length > 0 && jobs.length > 0
          ).pipe(Effect.provide(a.app)),
          "30 seconds"
        )

        // A consumer waiting on the feed for rows that do not come (no company is written).
        const waiting = yield* Effect.forEach(leavingUses, (inUse) =>
          Effect.gen(function* () {
            const companies = "/api/audit/feed?businessObject=crm%2Fcompany&limit=500"
            const page = yield* inUse.member.get(companies)
            const cursor = Predicate.hasProperty(page.body, "nextCursor") ? String(page.body.nextCursor) : ""
            return yield* Effect.forkChild(inUse.member.get(`${companies}&wait=30&cursor=${cursor}`))
          })
        )

        const dropped = yield* Effect.provide(runCli("workspace", "drop", leaving.slug, "--yes"), cli)
        expect(Exit.isSuccess(dropped.exit), dropped.stderr.join("\n")).toBe(true)
        expect(dropped.stdout).toEqual([expect.stringMatching(new RegExp(`^workspace ${leaving.slug} dropped `))])

        // Its streams end on both instances, saying why.
        for (const inUse of leavingUses) {
          yield* inUse.broadcast.ended
          const events = yield* inUse.broadcast.events
          expect(events[0]).toEqual(opened)
          expect(events.at(-1)).toEqual(ended("workspace-removed"))
          yield* inUse.feed.ended
          expect((yield* inUse.feed.events).at(-1)).toEqual(ended("workspace-removed"))
        }
        for (const longPoll of waiting) {
          const answer = yield* Fiber.join(longPoll)
          expect(answer.status).toBe(404)
          expect(answer.body).toMatchObject({ message: "the workspace no longer exists: it has been removed" })
        }
        // Every loop goes on past the drop.
        yield* Effect.forEach(uses, (inUse) => Effect.forEach(inUse.loops, (loop) => loop.further(6)), {
          discard: true
        })
        yield* Effect.forEach(
          uses.flatMap((inUse) => inUse.loops),
          (loop) => loop.stop,
          { discard: true }
        )

        expect(broken(yield* allAnswers(uses))).toEqual([])
        // The leaving workspace's callers end up refused: credentials gone (401), the engine's workspace unknown (404).
        for (const inUse of leavingUses) {
          for (const loop of inUse.loops) {
            const last = (yield* loop.answers).slice(-3)
            expect(
              last.every((answer) => answer.status === 401 || answer.status === 404),
              JSON.stringify(last)
            ).toBe(true)
          }
        }
        // The staying workspace's callers were answered 2xx throughout.
        const refusedStaying = (yield* allAnswers(stayingUses)).filter((answer) => answer.status >= 300)
        expect(refusedStaying).toEqual([])

        // Its queued work: gone, or done by a worker that found the workspace gone.
        yield* eventually(
          "no job or workflow run of the dropped workspace is left waiting",
          Effect.map(waitingWork(leaving, queuePrefix), (waiting) => waiting.length === 0).pipe(Effect.provide(a.app)),
          "30 seconds"
        )
        const sql = Context.get(a.app, SqlClient.SqlClient)
        const schemas = yield* sql`SELECT 1 FROM information_schema.schemata WHERE schema_name = ${leaving.schema}`
        expect(schemas).toEqual([])
        expect(Option.isNone(yield* workspaces.findBySlug(leaving.slug))).toBe(true)

        // The staying workspace's streams are still open on both instances and hear its next write.
        const writer = stayingUses[0]
        if (writer === undefined) return yield* Effect.die("no caller of the staying workspace")
        const record = yield* createRecord(writer.member, deal, { title: "After the drop" })
        for (const inUse of stayingUses) {
          yield* inUse.broadcast.waitFor((events) => events.some((event) => hintId(event) === record.id))
          yield* inUse.feed.waitFor((events) =>
            events.some((event) => event.event === "entry" && JSON.stringify(event.data).includes(record.id))
          )
          expect((yield* inUse.broadcast.events).some((event) => event.event === "end")).toBe(false)
          expect((yield* inUse.feed.events).some((event) => event.event === "end")).toBe(false)
        }
      }),
    { timeout: 240_000 }
  )
})
