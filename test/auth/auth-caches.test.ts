import { describe, expect, it, layer } from "@effect/vitest"
import { SqlClient } from "effect/sql"
import { Context, Duration, Effect, Layer, Option, Redacted } from "effect"
import { ApiKeys } from "../../src/auth/ApiKeys"
import { Roles } from "../../src/auth/Roles"
import { BroadcastBus } from "../../src/broadcast/BroadcastBus"
import { platformSchema } from "../../src/tenancy/migrations/platform"
import { Workspaces } from "../../src/tenancy/Workspaces"
import { eventually } from "../broadcast/streamHelpers"
import { clientFor, createRecord, expectStatus, signedInMember } from "../support/api"
import { request, signIn } from "../support/http"
import { isSqlStatementSpan, otlpCollector } from "../support/otlpCollector"
import type { ReceivedSpan } from "../support/otlpCollector"
import { ownRedis } from "../support/ownRedis"
import { baseUrl, freshWorkspace, testApp, testPassword, uniqueSuffix } from "../support/TestApp"

const deal = "crm/deal"
const company = "crm/company"

type App = Context.Context<Layer.Success<ReturnType<typeof testApp>>>

/** Two instances of the service on one PostgreSQL and one Redis, as behind a balancer. */
class Instances extends Context.Service<
  Instances,
  { readonly a: App; readonly b: App; readonly baseA: string; readonly baseB: string }
>()("Instances") {}

const twoInstances = (overrides: Parameters<typeof testApp>[0] = {}) =>
  Effect.gen(function* () {
    const a = yield* Layer.build(Layer.fresh(testApp(overrides)))
    const b = yield* Layer.build(Layer.fresh(testApp(overrides)))
    expect(Context.get(a, BroadcastBus)).not.toBe(Context.get(b, BroadcastBus))
    return { a, b, baseA: yield* Effect.provide(baseUrl, a), baseB: yield* Effect.provide(baseUrl, b) }
  })

/** The status of `GET <url>` with these headers. */
const statusOf = (url: string, headers: Record<string, string>) =>
  Effect.map(request(url, { headers }), (response) => response.status)

const meWith = (base: string, cookie: string) => statusOf(`${base}/api/auth/me`, { cookie })

const becomes = (what: string, check: Effect.Effect<number>, status: number) =>
  eventually(
    what,
    Effect.map(check, (seen) => seen === status),
    "5 seconds"
  )

layer(Layer.effect(Instances, twoInstances()), { excludeTestServices: true })(
  "cached sessions, grants and API keys across two instances",
  (it) => {
    it.effect(
      "a sign-out on A: A refuses the session at once, B as soon as the invalidation arrives; sign out everywhere too",
      () =>
        Effect.gen(function* () {
          const { a, baseA, baseB } = yield* Instances
          const workspace = yield* Effect.provide(freshWorkspace, a)
          const { cookie, user } = yield* Effect.provide(signedInMember(baseA, workspace), a)
          const credentials = { workspace: workspace.slug, email: user.email, password: testPassword }
          const second = yield* signIn(baseA, credentials)
          const third = yield* signIn(baseA, credentials)
          // Each instance has read (and cached) each session.
          for (const session of [cookie, second, third]) {
            expect(yield* meWith(baseA, session)).toBe(200)
            expect(yield* meWith(baseB, session)).toBe(200)
          }

          expectStatus(204)(yield* clientFor(baseA, cookie).post("/api/auth/logout"))
          // Read-your-writes on the instance that made the change: no wait.
          expect(yield* meWith(baseA, cookie)).toBe(401)
          yield* becomes("B refuses the signed-out session", meWith(baseB, cookie), 401)
          expect(yield* meWith(baseB, second)).toBe(200)

          expectStatus(204)(yield* clientFor(baseA, second).post("/api/auth/logout-everywhere"))
          expect(yield* meWith(baseA, third)).toBe(401)
          yield* becomes("B refuses the user's other session", meWith(baseB, third), 401)
        })
    )

    it.effect(
      "a role change on A: B refuses the read the new role does not grant, and allows what a new grant adds",
      () =>
        Effect.gen(function* () {
          const { a, baseA, baseB } = yield* Instances
          const workspace = yield* Effect.provide(freshWorkspace, a)
          yield* Effect.provide(
            Roles.use((roles) =>
              Effect.all([
                roles.grant(workspace, "deal-reader", deal, "read"),
                roles.grant(workspace, "company-reader", company, "read")
              ])
            ),
            a
          )
          const { client: admin } = yield* Effect.provide(signedInMember(baseA, workspace), a)
          const { cookie, user } = yield* Effect.provide(signedInMember(baseA, workspace, "deal-reader"), a)
          const record = yield* createRecord(admin, deal, { title: "Read on B" })
          const readOn = (base: string) => statusOf(`${base}/api/records/${deal}/${record.id}`, { cookie })
          expect(yield* readOn(baseA)).toBe(200)
          expect(yield* readOn(baseB)).toBe(200)

          expectStatus(200)(yield* admin.put(`/api/members/${user.id}/role`, { role: "company-reader" }))
          expect(yield* readOn(baseA)).toBe(403)
          yield* becomes("B refuses the read the role no longer grants", readOn(baseB), 403)

          // A grant given to the role (what `admin role grant` does), on A.
          yield* Effect.provide(
            Roles.use((roles) => roles.grant(workspace, "company-reader", deal, "read")),
            a
          )
          expect(yield* readOn(baseA)).toBe(200)
          yield* becomes("B allows the read the role now grants", readOn(baseB), 200)
        })
    )

    it.effect("a member removed on A: B refuses their session", () =>
      Effect.gen(function* () {
        const { a, baseA, baseB } = yield* Instances
        const workspace = yield* Effect.provide(freshWorkspace, a)
        const { client: admin } = yield* Effect.provide(signedInMember(baseA, workspace), a)
        const { cookie, user } = yield* Effect.provide(signedInMember(baseA, workspace, "admin"), a)
        const record = yield* createRecord(admin, deal, { title: "Read on B" })
        const readOnB = statusOf(`${baseB}/api/records/${deal}/${record.id}`, { cookie })
        expect(yield* readOnB).toBe(200)

        expectStatus(204)(yield* admin.del(`/api/members/${user.id}`))
        yield* becomes("B refuses the removed member", readOnB, 401)
      })
    )

    it.effect("an API key revoked on A: A refuses it at once, B as soon as the invalidation arrives", () =>
      Effect.gen(function* () {
        const { a, baseA, baseB } = yield* Instances
        const workspace = yield* Effect.provide(freshWorkspace, a)
        const { apiKey, key } = yield* Effect.provide(
          ApiKeys.use((keys) => keys.create(workspace, "Reader", "admin")),
          a
        )
        const bearer = { authorization: `Bearer ${key}` }
        expect(yield* statusOf(`${baseA}/api/auth/me`, bearer)).toBe(200)
        expect(yield* statusOf(`${baseB}/api/auth/me`, bearer)).toBe(200)

        yield* Effect.provide(
          ApiKeys.use((keys) => keys.revoke(workspace, apiKey.id)),
          a
        )
        expect(yield* statusOf(`${baseA}/api/auth/me`, bearer)).toBe(401)
        yield* becomes("B refuses the revoked key", statusOf(`${baseB}/api/auth/me`, bearer), 401)
      })
    )

    it.effect("a workspace dropped on A: B refuses its sessions (401), rather than reading a schema that is gone", () =>
      Effect.gen(function* () {
        const { a, baseA, baseB } = yield* Instances
        const workspaces = Context.get(a, Workspaces)
        const workspace = yield* Effect.provide(workspaces.create(`t-${uniqueSuffix()}`), a)
        const { cookie } = yield* Effect.provide(signedInMember(baseA, workspace), a)
        const listOnB = statusOf(`${baseB}/api/records/${deal}`, { cookie })
        expect(yield* listOnB).toBe(200)

        yield* Effect.provide(workspaces.drop(workspace), a)
        yield* becomes("B refuses the dropped workspace's session", listOnB, 401)
      })
    )

    it.effect("a cached session ends at its expiry, with nothing changed in the database since it was read", () =>
      Effect.gen(function* () {
        const { a, baseA, baseB } = yield* Instances
        const workspace = yield* Effect.provide(freshWorkspace, a)
        const { cookie, user } = yield* Effect.provide(signedInMember(baseA, workspace), a)
        const sql = Context.get(a, SqlClient.SqlClient)
        yield* sql`UPDATE ${sql(`${platformSchema}.sessions`)} SET expires_at = now() + interval '3 seconds'
          WHERE user_id = ${user.id}`
        expect(yield* meWith(baseB, cookie)).toBe(200)
        yield* becomes("B refuses the session once it has expired", meWith(baseB, cookie), 401)
      })
    )
  }
)

describe("caches and a lost Redis subscription", () => {
  it.live(
    "while B's subscription is lost B reads through to PostgreSQL; once regained it has forgotten what it held",
    () =>
      Effect.gen(function* () {
        const redis = yield* ownRedis
        const { a, b, baseA, baseB } = yield* twoInstances({ redisUrl: Option.some(Redacted.make(redis.url)) })
        const busB = Context.get(b, BroadcastBus)
        const workspace = yield* Effect.provide(freshWorkspace, a)
        const { cookie, user } = yield* Effect.provide(signedInMember(baseA, workspace), a)
        const credentials = { workspace: workspace.slug, email: user.email, password: testPassword }
        const checkedDuring = yield* signIn(baseA, credentials)
        const checkedAfter = yield* signIn(baseA, credentials)
        for (const session of [cookie, checkedDuring, checkedAfter]) expect(yield* meWith(baseB, session)).toBe(200)

        yield* redis.stop
        yield* eventually(
          "B knows its subscription is lost",
          Effect.map(busB.status, (status) => !status.subscribed)
        )
        // Signed out on A while B hears nothing: A's invalidations are lost.
        expectStatus(204)(yield* clientFor(baseA, checkedDuring).post("/api/auth/logout"))
        expectStatus(204)(yield* clientFor(baseA, checkedAfter).post("/api/auth/logout"))
        expect(yield* meWith(baseB, checkedDuring)).toBe(401)
        expect(yield* meWith(baseB, cookie)).toBe(200)

        yield* redis.start
        yield* eventually(
          "B is subscribed again",
          Effect.map(busB.status, (status) => status.subscribed),
          "15 seconds"
        )
        // The session signed out during the outage was cached before it and never read since.
        expect(yield* meWith(baseB, checkedAfter)).toBe(401)
        expect(yield* meWith(baseB, cookie)).toBe(200)
      }),
    { timeout: 60_000 }
  )
})

/** The SQL statements of the request sent with `requestId`, once its server span has arrived. */
const statementsOf = (spans: ReadonlyArray<ReceivedSpan>, requestId: string) => {
  const server = spans.find((span) => span.kind === 2 && span.attributes["http.request.id"] === requestId)
  if (server === undefined) return undefined
  return spans
    .filter((span) => span.traceId === server.traceId && isSqlStatementSpan(span))
    .map((span) => span.attributes["db.query.text"] ?? "")
}

describe("the caches are used", () => {
  it.live(
    "a repeated authenticated GET reads neither the session nor the grants (nor an API key) from PostgreSQL",
    () =>
      Effect.gen(function* () {
        const collector = yield* otlpCollector
        const app = yield* Layer.build(
          testApp({
            otelEndpoint: Option.some(collector.url),
            otelServiceName: `caches-${uniqueSuffix()}`,
            otelExportInterval: Duration.millis(100)
          })
        )
        const base = yield* Effect.provide(baseUrl, app)
        const workspace = yield* Effect.provide(freshWorkspace, app)
        const { client } = yield* Effect.provide(signedInMember(base, workspace), app)
        // Signed in, not yet seen by any request.
        const { cookie } = yield* Effect.provide(signedInMember(base, workspace), app)
        const { key } = yield* Effect.provide(
          ApiKeys.use((keys) => keys.create(workspace, "Reader", "admin")),
          app
        )
        const record = yield* createRecord(client, deal, { title: "Read twice" })
        const ids = {
          session: [`first-${uniqueSuffix()}`, `second-${uniqueSuffix()}`],
          key: [`first-${uniqueSuffix()}`, `second-${uniqueSuffix()}`]
        }
        const read = (headers: Record<string, string>, requestId: string) =>
          Effect.map(
            request(`${base}/api/records/${deal}/${record.id}`, { headers: { ...headers, "x-request-id": requestId } }),
            expectStatus(200)
          )
        for (const id of ids.session) yield* read({ cookie }, id)
        for (const id of ids.key) yield* read({ authorization: `Bearer ${key}` }, id)
        yield* collector.awaitSpans((spans) =>
          [...ids.session, ...ids.key].every((id) => statementsOf(spans, id) !== undefined)
        )
        const [sessionFirst, sessionSecond, keyFirst, keySecond] = [...ids.session, ...ids.key].map(
          (id) => statementsOf(collector.spans, id) ?? []
        )
        const touching = (statements: ReadonlyArray<string> | undefined, table: string) =>
          (statements ?? []).filter((text) => text.includes(`.${table}`) || text.includes(`"${table}"`))

        // The first request of each reads them, which shows the statements are seen at all.
        expect(touching(sessionFirst, "sessions")).toHaveLength(1)
        expect(touching(sessionFirst, "role_grants")).toHaveLength(1)
        expect(touching(keyFirst, "api_keys")).toHaveLength(1)
        expect(touching(keyFirst, "role_grants")).toHaveLength(1)
        // The second reads the record and nothing else.
        for (const statements of [sessionSecond, keySecond]) {
          for (const table of ["sessions", "memberships", "role_grants", "role_assignments", "api_keys", "workspaces"])
            expect(touching(statements, table), table).toEqual([])
          expect(touching(statements, "records").length).toBeGreaterThan(0)
        }
      }),
    { timeout: 60_000 }
  )
})
