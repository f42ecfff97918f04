import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { Deferred, Duration, Effect, Exit, Fiber, Layer, Queue, Scope } from "effect"
import { connect } from "node:net"
import { Readiness } from "../../src/health/Readiness"
import { eventually } from "../broadcast/streamHelpers"
import { recordsOf, signedInMember } from "../support/api"
import { baseUrl, freshWorkspace, testApp, TestServices } from "../support/TestApp"

/**
 * The drain as an app's scope sees it when it closes (what SIGTERM does to
 * the real service, see shutdown.test.ts): readiness turns "draining" first,
 * while a request is still in flight, and the close waits for its answer.
 */
layer(TestServices, { excludeTestServices: true })("drain", (it) => {
  it.effect(
    "closing the app: readiness is draining while a request is in flight; the request is answered, then the app closes",
    () =>
      Effect.gen(function* () {
        // The app under test has a scope of its own; the workspace and user live in the test's services.
        const appScope = yield* Scope.make()
        yield* Effect.addFinalizer(() => Scope.close(appScope, Exit.void))
        const app = yield* Layer.buildWithScope(testApp({ drainTimeout: Duration.seconds(30) }), appScope)
        const base = yield* Effect.provide(baseUrl, app)
        const readiness = Readiness.use((r) => r.isDraining).pipe(Effect.provide(app))
        const workspace = yield* freshWorkspace
        const { client } = yield* signedInMember(base, workspace)
        const sql = yield* SqlClient.SqlClient

        // A write waits on the test's lock: in flight until it is released.
        const locked = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const holder = yield* sql
          .withTransaction(
            sql
              .unsafe(`LOCK TABLE ${workspace.table("records")} IN EXCLUSIVE MODE`)
              .pipe(Effect.andThen(Deferred.succeed(locked, undefined)), Effect.andThen(Deferred.await(release)))
          )
          .pipe(Effect.orDie, Effect.forkChild)
        yield* Deferred.await(locked)
        const write = yield* Effect.forkChild(recordsOf(client, "crm/deal").create({ title: "In flight" }))
        yield* eventually(
          "the write waits",
          sql<{
            n: number
          }>`SELECT count(*)::int AS n FROM pg_locks WHERE relation = ${workspace.table("records")}::regclass AND NOT granted`.pipe(
            Effect.map((rows) => rows[0]?.n === 1),
            Effect.orDie
          )
        )
        expect(yield* readiness).toBe(false)

        const closing = yield* Effect.forkChild(Scope.close(appScope, Exit.void))
        yield* eventually("readiness says draining", readiness)
        expect(closing.pollUnsafe()).toBeUndefined()

        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(holder)
        const answer = yield* Fiber.join(write)
        expect(answer.status).toBe(201)
        expect(answer.headers.get("connection")).toBe("close")
        yield* Fiber.join(closing)
      }),
    60_000
  )

  it.effect(
    "a request sent on an idle keep-alive connection just as the drain begins is answered, not reset",
    () =>
      Effect.gen(function* () {
        const appScope = yield* Scope.make()
        yield* Effect.addFinalizer(() => Scope.close(appScope, Exit.void))
        const app = yield* Layer.buildWithScope(testApp({ drainTimeout: Duration.seconds(30) }), appScope)
        const url = new URL(yield* Effect.provide(baseUrl, app))
        const readiness = Readiness.use((r) => r.isDraining).pipe(Effect.provide(app))

        // One connection, kept alive: what it receives, and whether the server reset or closed it.
        const received = yield* Queue.unbounded<string>()
        const socket = yield* Effect.acquireRelease(
          Effect.sync(() => connect(Number(url.port), url.hostname)),
          (socket) => Effect.sync(() => socket.destroy())
        )
        let text = ""
        let ended: string | undefined
        socket.on("data", (chunk) => {
          text += chunk.toString("latin1")
          Queue.offerUnsafe(received, text)
        })
        socket.on("error", (error) => (ended = `error: ${error.message}`))
        socket.on("close", () => {
          ended ??= "closed"
          Queue.offerUnsafe(received, text)
        })
        const ask = Effect.sync(() => socket.write(`GET /api/health/live HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`))
        const answers = (n: number) =>
          Effect.gen(function* () {
            let seen = text
            while ((seen.match(/HTTP\/1\.1 200/g) ?? []).length < n && ended === undefined)
              seen = yield* Queue.take(received)
            return seen
          })

        yield* ask
        yield* answers(1)
        expect(text).toContain("HTTP/1.1 200")
        expect(text.toLowerCase()).not.toContain("connection: close")

        // The connection is idle now. The drain begins, and the next request is already on its way.
        const closing = yield* Effect.forkChild(Scope.close(appScope, Exit.void))
        yield* eventually("readiness says draining", readiness)
        yield* ask
        yield* answers(2)
        expect(ended ?? "open").not.toMatch(/^error/)
        expect((text.match(/HTTP\/1\.1 200/g) ?? []).length).toBe(2)
        expect(text.slice(text.lastIndexOf("HTTP/1.1 200")).toLowerCase()).toContain("connection: close")
        yield* Fiber.join(closing)
      }),
    60_000
  )
})
