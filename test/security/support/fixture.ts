import { afterAll, beforeAll } from "vitest"
import { Duration, Effect, Exit, Layer, ManagedRuntime, Scope } from "effect"
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Agents } from "../../../src/agents/Agents"
import { ApiKeys } from "../../../src/auth/ApiKeys"
import { Sessions } from "../../../src/auth/Sessions"
import { WebRoot } from "../../../src/http/WebRoot"
import type { Workspace } from "../../../src/api/Workspace"
import { clientFor, createRecord, recordsOf } from "../../support/api"
import { signIn } from "../../support/http"
import { baseUrl, freshUser, freshWorkspace, testApp, testPassword, uniqueSuffix } from "../../support/TestApp"

/** The app's background work is retried at most this often (so a failing job cannot keep the workspace moving). */
export const fixtureMaxAttempts = 3

const makeApp = (queuePrefix: string, webRoot: string) =>
  testApp({ queuePrefix, jobMaxAttempts: fixtureMaxAttempts }).pipe(Layer.provide(Layer.succeed(WebRoot, webRoot)))

type AppServices = Layer.Success<ReturnType<typeof makeApp>>

/**
 * One workspace with the crm plugin's business objects and a few records,
 * an admin (signed in, with the page's own Origin), an API key holder with
 * the admin role, and a stand-in build of the web page.
 */
export interface Fixture {
  readonly port: number
  /** `http://127.0.0.1:<port>`: the service's own origin. */
  readonly origin: string
  readonly workspace: Workspace
  readonly queuePrefix: string
  readonly adminEmail: string
  /** The admin's `session=<token>` pair; renewed after a fuzzed logout ends it. */
  adminCookie: string
  readonly apiKey: string
  readonly agentId: string
  readonly ids: {
    readonly company: string
    readonly deal: string
    readonly activity: string
    readonly draft: string
    readonly archived: string
  }
  readonly run: <A, E>(effect: Effect.Effect<A, E, AppServices | Scope.Scope>) => Promise<A>
  /** Replaces `adminCookie` with a fresh session, minted without HTTP (no sign-in throttle to trip). */
  readonly renewAdminSession: () => Promise<void>
  /** Another session of the admin's, as a `session=<token>` pair. */
  readonly newAdminSession: () => Promise<string>
  readonly close: () => Promise<void>
}

const indexHtml = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Records</title></head><body><div id="root"></div></body></html>`

export const setUpFixture = async (): Promise<Fixture> => {
  const webRoot = await mkdtemp(join(tmpdir(), "hostile-web-"))
  await mkdir(join(webRoot, "assets"), { recursive: true })
  await writeFile(join(webRoot, "index.html"), indexHtml)
  await writeFile(join(webRoot, "assets", "app-abc123.js"), "console.log(1)")
  const queuePrefix = `test-hostile-${uniqueSuffix()}`
  const runtime = ManagedRuntime.make(makeApp(queuePrefix, webRoot))
  const scope = await Effect.runPromise(Scope.make())
  const run = <A, E>(effect: Effect.Effect<A, E, AppServices | Scope.Scope>) =>
    runtime.runPromise(Scope.provide(effect, scope))
  try {
    const base = await run(baseUrl)
    const port = Number(new URL(base).port)
    const workspace = await run(freshWorkspace)
    const admin = await run(freshUser({ workspace, role: "admin" }))
    const sessionCookie = (): Promise<string> =>
      run(
        Effect.map(
          Effect.flatMap(Sessions, (sessions) => sessions.start(admin.id, workspace.id, Duration.hours(1))),
          (token) => `session=${token}`
        ).pipe(Effect.provide(Sessions.layer))
      )
    const { key } = await run(Effect.flatMap(ApiKeys, (keys) => keys.create(workspace, "fuzzer", "admin")))
    const agent = await run(Effect.flatMap(Agents, (agents) => agents.create(workspace, "Fuzz agent", "admin")))

    // Records in each state, written over HTTP as any client would.
    const cookie = await Effect.runPromise(
      signIn(base, { workspace: workspace.slug, email: admin.email, password: testPassword })
    )
    const api = clientFor(base, cookie, { origin: base })
    const company = await Effect.runPromise(
      createRecord(api, "crm/company", { name: "Fuzz Foods", website: "https://fuzz.example", wonDeals: 0 })
    )
    const deal = await Effect.runPromise(
      createRecord(api, "crm/deal", {
        title: "Fuzz kiosk",
        stage: "open",
        amount: "1200.00",
        closeDate: "2026-12-15",
        company: company.id,
        address: { street: "1 Harbour Road", city: "Oslo", country: "Norway" },
        lineItems: [{ id: "li-1", product: "Kiosk", quantity: 2, price: "450.00" }]
      })
    )
    const activity = await Effect.runPromise(
      createRecord(api, "crm/activity", { subject: "Call back", company: company.id })
    )
    const draft = await Effect.runPromise(createRecord(api, "crm/deal", { title: "Draft deal" }, true))
    const archived = await Effect.runPromise(createRecord(api, "crm/company", { name: "Gone Ltd" }))
    await Effect.runPromise(recordsOf(api, "crm/company").archive(archived.id))

    const fixture: Fixture = {
      port,
      origin: base,
      workspace,
      queuePrefix,
      adminEmail: admin.email,
      adminCookie: await sessionCookie(),
      apiKey: key,
      agentId: agent.agent.id,
      ids: { company: company.id, deal: deal.id, activity: activity.id, draft: draft.id, archived: archived.id },
      run,
      renewAdminSession: async () => {
        fixture.adminCookie = await sessionCookie()
      },
      newAdminSession: sessionCookie,
      close: async () => {
        await Effect.runPromise(Scope.close(scope, Exit.void))
        await runtime.dispose()
        await rm(webRoot, { recursive: true, force: true })
      }
    }
    return fixture
  } catch (error) {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await runtime.dispose()
    await rm(webRoot, { recursive: true, force: true })
    throw error
  }
}

/**
 * One fixture for the test file: set up before its first test, closed after its last. The
 * returned function gives it, and throws when the set-up failed (its error is the suite's).
 */
export const fixtureForFile = (): (() => Fixture) => {
  let fixture: Fixture | undefined
  beforeAll(async () => {
    fixture = await setUpFixture()
  }, 120_000)
  afterAll(async () => {
    await fixture?.close()
  }, 60_000)
  return () => {
    if (fixture === undefined) throw new Error("the fixture did not start")
    return fixture
  }
}
