import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Option } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { demo } from "../../src/app/Provisioning"
import { baseUrl, testApp } from "../support/TestApp"
import { clientFor } from "../support/api"
import { signIn } from "../support/http"

/** The service as `npm start` runs it with nothing configured: PGlite and the in-process bus. */
const embeddedApp = (dataDir: string) => testApp({ databaseUrl: Option.none(), redisUrl: Option.none(), dataDir })

const withDataDir = <A, E, R>(use: (dataDir: string) => Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "embedded-pg-"))),
    use,
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

describe("embedded mode", () => {
  it.live(
    "boots on PGlite, reports it in /api/health, and the demo credentials sign in",
    () =>
      withDataDir((dataDir) =>
        Effect.gen(function* () {
          const base = yield* baseUrl
          const health = yield* clientFor(base, "").call((api) => api.health.health())
          expect(health.status).toBe(200)
          expect(health.json).toEqual({
            database: { status: "up", kind: "embedded" },
            pubsub: { status: "up", kind: "in-process" },
            broadcast: { subscribed: true, lostSince: null, outages: 0, lastOutageMs: null, droppedPublishes: 0 },
            // PGlite has no logical decoding: FEED_POSITIONS=auto takes lock mode.
            feed: { mode: "lock", slot: null, holder: false, slotLagBytes: null, unpositionedRows: null, delayMs: null }
          })
          const cookie = yield* signIn(base, { workspace: demo.workspace, email: demo.email, password: demo.password })
          const demoUser = clientFor(base, cookie)
          const me = yield* demoUser.call((api) => api.auth.me())
          expect(me.body).toMatchObject({ kind: "user", email: demo.email, workspace: { slug: demo.workspace } })
          const deal = yield* demoUser.call((api) =>
            api.businessObjects.get({ params: { businessObject: "crm/deal" } })
          )
          expect(deal.status).toBe(200)

          // A second service on the same data directory is refused instead of corrupting it.
          const second = yield* Layer.build(embeddedApp(dataDir)).pipe(Effect.scoped, Effect.exit)
          expect(Exit.isFailure(second)).toBe(true)
          expect(String(Exit.isFailure(second) ? second.cause : "")).toContain("is in use by process")
        }).pipe(Effect.provide(embeddedApp(dataDir)))
      ),
    120_000
  )

  it.live(
    "keeps its data across restarts and provisions the demo only once",
    () =>
      withDataDir((dataDir) =>
        Effect.gen(function* () {
          const signInOnce = Effect.gen(function* () {
            const base = yield* baseUrl
            return yield* signIn(base, { workspace: demo.workspace, email: demo.email, password: demo.password })
          }).pipe(Effect.provide(embeddedApp(dataDir)))
          yield* signInOnce
          // The restart reuses the directory: the demo user is still there, and is not created twice.
          yield* signInOnce
        })
      ),
    120_000
  )
})
