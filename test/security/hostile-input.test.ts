import { Effect } from "effect"
import { describe, it } from "vitest"
import { caseFor } from "./support/arbitraries"
import type { Case } from "./support/arbitraries"
import { changedTables, pendingWork, schemaChecksum } from "./support/checksum"
import type { SchemaChecksum } from "./support/checksum"
import { fixtureMaxAttempts, fixtureForFile } from "./support/fixture"
import { checkAll } from "../support/arbitraries"
import type { Fixture } from "./support/fixture"
import { describeCase, toRawRequest, unknownNameTwin, violations } from "./support/oracles"
import { sendRaw } from "./support/rawHttp"
import { endpointRoutes, isApiRoute, otherRoutes, stateChanging } from "./support/routes"
import type { Route } from "./support/routes"

/**
 * Hostile input against every route: each endpoint of the HttpApi
 * definition (read from it, so a new route is covered without touching this
 * file), the web page, the docs and unknown routes. Requests go out as raw
 * bytes, as a signed-in admin (with the page's own Origin), as an API key
 * holder and anonymously, with random and malformed bodies, odd path
 * segments, query junk and header variants. Every answer must be a 2xx or a
 * clear 4xx (JSON `{_tag, message}`, short, not echoing the input), never a
 * 5xx, a hang or a dropped connection; a 4xx and every GET change nothing in
 * the workspace (a checksum of all its tables before and after); and the
 * rules of issue 11 hold where a case breaks exactly one (see oracles.ts).
 *
 * Replay a failure with `FUZZ_REPLAY=<token> npx vitest run
 * test/security/hostile-input.test.ts -t '<route key>'` (a failure prints
 * the token and the shrunk request); `FUZZ_RUNS` sets the runs per route,
 * `FUZZ_SEED` one seed for every route (each draws from its own otherwise).
 */

const runsPerRoute = Number(process.env.FUZZ_RUNS ?? "16")
const seed = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED)
const replay = process.env.FUZZ_REPLAY
/** Far above any honest answer here; a request still open then is reported as a hang. */
const requestTimeoutMs = 10_000
/** Per route, runs and shrinking together: keeps a failing route from taking the whole suite's time. */
const routeTimeLimitMs = 15_000

const fixture = fixtureForFile()

/** Waits until the background work a 2xx queued (a job, a workflow run) is done: it writes later. */
const settled = (current: Fixture) =>
  current.run(
    Effect.gen(function* () {
      for (let waited = 0; (yield* pendingWork(current.queuePrefix, fixtureMaxAttempts)) > 0; waited += 1) {
        if (waited > 400)
          return yield* Effect.die(new Error("background work queued by an earlier request did not finish"))
        yield* Effect.sleep("25 millis")
      }
    })
  )

const settledChecksum = async (current: Fixture) => {
  await settled(current)
  return current.run(schemaChecksum(current.workspace.schema))
}

/**
 * The workspace's checksum after the last request, while nothing can have
 * moved it since (the last answer changed nothing and queued no work).
 */
let lastChecksum: SchemaChecksum | undefined

const probe = async (current: Fixture, route: Route, input: Case) => {
  const before = lastChecksum ?? (await settledChecksum(current))
  lastChecksum = undefined
  const outcome = await sendRaw(current.port, toRawRequest(current, route, input), requestTimeoutMs)
  const after = await current.run(schemaChecksum(current.workspace.schema))
  const answered = outcome._tag === "Answered" ? outcome.response.status : undefined
  const twinCase = isApiRoute(route) ? unknownNameTwin(input) : undefined
  const twinOutcome =
    twinCase === undefined
      ? undefined
      : await sendRaw(current.port, toRawRequest(current, route, twinCase.twin), requestTimeoutMs)
  const twin =
    twinCase !== undefined && twinOutcome?._tag === "Answered"
      ? { names: twinCase.names, status: twinOutcome.response.status }
      : undefined
  // A fuzzed sign-out (of this session, or of all the admin's) that went through: the admin signs in again.
  const signsOut = route.key === "auth.logout" || route.key === "auth.logoutEverywhere"
  if (signsOut && answered !== undefined && answered < 300) await current.renewAdminSession()
  // A hang may still be running on the server; a 2xx may have queued work: take a fresh checksum next time.
  const quiet = (status: number | undefined) => status !== undefined && (status >= 400 || !stateChanging(input.method))
  if (quiet(answered) && (twinCase === undefined || quiet(twin?.status)) && changedTables(before, after).length === 0) {
    lastChecksum = after
  }
  const broken = violations(current, route, input, { outcome, before, after, ...(twin === undefined ? {} : { twin }) })
  if (broken.length > 0) {
    throw new Error(`${route.key}: ${broken.join("\n  and ")}\nrequest:\n${describeCase(current, route, input)}`)
  }
}

/** Deleting runs last: it may take the fixture's records with it, and the other routes want them there. */
const destructive = (route: Route) => route.key === "records.remove"
const routes = [
  ...endpointRoutes().filter((route) => !destructive(route)),
  ...otherRoutes,
  ...endpointRoutes().filter(destructive)
]

describe("hostile input on every route (raw HTTP, PostgreSQL, Redis)", () => {
  it("covers every endpoint of the API definition", () => {
    if (endpointRoutes().length < 20) throw new Error(`only ${endpointRoutes().length} endpoints found in Api`)
  })

  for (const route of routes) {
    it(`${route.key}: ${route.method} ${route.path}`, { timeout: routeTimeLimitMs + 30_000 }, async () => {
      const current = fixture()
      await checkAll(caseFor(current, route), (input) => probe(current, route, input), {
        runs: runsPerRoute,
        timeLimitMs: routeTimeLimitMs,
        seed,
        replay,
        describe: (input) => describeCase(current, route, input)
      })
    })
  }
})
