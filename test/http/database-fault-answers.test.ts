import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { HttpRouter } from "effect/http"
import { NodeHttpServer } from "@effect/platform-node"
import { SqlError, UnknownError } from "effect/sql/SqlError"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Option, References, Schema } from "effect"
import { createServer } from "node:http"
import { CommitOutcomeUnknown } from "../../src/db/DatabaseFault"
import { Conflict, InternalError, ServiceUnavailable } from "../../src/api/errors"
import { errorResponses } from "../../src/http/ErrorResponses"
import { edge } from "../../src/http/Edge"
import { baseUrl } from "../support/TestApp"
import { request } from "../support/http"

// A test-only API whose handlers meet database faults, served through the service's own error middleware.

const failing = (message: string, code: string) =>
  new SqlError({
    reason: new UnknownError({
      cause: Object.assign(new Error(message), { code }),
      message: "Failed to execute statement"
    })
  })

/** As every endpoint of the service's API does, each declares the errors any route may answer with. */
const endpoint = <const Name extends string, const Path extends `/${string}`>(name: Name, path: Path) =>
  HttpApiEndpoint.get(name, path, { success: Schema.String, error: [InternalError, ServiceUnavailable, Conflict] })

class Faulty extends HttpApiGroup.make("faulty").add(
  endpoint("unavailable", "/unavailable"),
  endpoint("lostDefect", "/lost-defect"),
  endpoint("lostFailure", "/lost-failure"),
  endpoint("lockTimeout", "/lock-timeout"),
  endpoint("commitUnknown", "/commit-unknown"),
  endpoint("duplicate", "/duplicate"),
  endpoint("workspaceGone", "/workspace-gone"),
  endpoint("bug", "/bug")
) {}

/** Configured as the service's own API is (src/http/ServedApi.ts): an undeclared failure stays visible. */
class FaultyApi extends HttpApi.make("faulty").add(Faulty).annotate(HttpApi.ErrorParseOptions, { reportInput: true }) {}

const lost = failing("terminating connection due to administrator command", "57P01")

const FaultyHandlers = HttpApiBuilder.group(FaultyApi, "faulty", (handlers) =>
  handlers
    .handle("unavailable", () => Effect.fail(new ServiceUnavailable({ message: "come back later", retryAfter: 7 })))
    .handle("lostDefect", () => Effect.die(lost))
    // A SqlError is in no endpoint's errors: the type system is told otherwise to let one escape as a failure.
    .handle("lostFailure", () => Effect.fail(lost) as unknown as Effect.Effect<string>)
    .handle("lockTimeout", () => Effect.die(failing("canceling statement due to lock timeout", "55P03")))
    .handle("commitUnknown", () => Effect.die(new CommitOutcomeUnknown({ cause: lost })))
    .handle("duplicate", () => Effect.die(failing("duplicate key value violates unique constraint", "23505")))
    .handle("workspaceGone", () => Effect.die(failing('relation "ws_acme.records" does not exist', "42P01")))
    .handle("bug", () => Effect.die(failing('relation "nowhere" does not exist', "42P01")))
)

/** The service's own edge and error answers, around the test API's routes, as Server.ts puts them. */
const outer = edge({ hstsMaxAge: Option.none() })
const EdgeLive = HttpRouter.middleware((app) => outer(errorResponses(app)), { global: true })

const FaultyServer = HttpRouter.serve(
  Layer.mergeAll(HttpApiBuilder.layer(FaultyApi).pipe(Layer.provide(FaultyHandlers)), EdgeLive),
  { disableLogger: true }
).pipe(
  Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
  Layer.provide(Layer.succeed(References.MinimumLogLevel, "None"))
)

layer(FaultyServer, { excludeTestServices: true })("the one answer to database faults", (it) => {
  it.effect("a ServiceUnavailable gets its retryAfter as a Retry-After header", () =>
    Effect.gen(function* () {
      const response = yield* request(`${yield* baseUrl}/unavailable`)
      expect(response.status).toBe(503)
      expect(response.headers.get("retry-after")).toBe("7")
      expect(response.body).toMatchObject({ _tag: "ServiceUnavailable", message: "come back later" })
    })
  )

  it.effect("a lost connection, died or failed, is a 503 with Retry-After, never a 500", () =>
    Effect.gen(function* () {
      for (const path of ["/lost-defect", "/lost-failure"]) {
        const response = yield* request(`${yield* baseUrl}${path}`)
        expect(response.status, path).toBe(503)
        expect(response.headers.get("retry-after"), path).toBe("1")
        expect(response.body, path).toEqual({
          requestId: expect.any(String),
          _tag: "ServiceUnavailable",
          message: "the database is unavailable; retry later",
          retryAfter: 1
        })
      }
    })
  )

  it.effect("a lock timeout is a 503 saying another write holds the data", () =>
    Effect.gen(function* () {
      const response = yield* request(`${yield* baseUrl}/lock-timeout`)
      expect(response.status).toBe(503)
      expect(response.headers.get("retry-after")).toBe("1")
      expect(response.body).toMatchObject({ message: "the data is being changed by another write; retry later" })
    })
  )

  it.effect("a lost COMMIT is a 503 that says the outcome is unknown", () =>
    Effect.gen(function* () {
      const response = yield* request(`${yield* baseUrl}/commit-unknown`)
      expect(response.status).toBe(503)
      expect(response.body).toMatchObject({ _tag: "ServiceUnavailable" })
      expect(JSON.stringify(response.body)).toContain("outcome is unknown")
    })
  )

  it.effect("a statement on a workspace dropped meanwhile is a 404 saying it has been removed, never a 500", () =>
    Effect.gen(function* () {
      const response = yield* request(`${yield* baseUrl}/workspace-gone`)
      expect(response.status).toBe(404)
      expect(response.body).toEqual({
        _tag: "NotFound",
        message: "the workspace no longer exists: it has been removed",
        requestId: expect.any(String)
      })
    })
  )

  it.effect("a duplicate key is a 409; any other statement error is a bug: 500 with nothing of the SQL", () =>
    Effect.gen(function* () {
      const duplicate = yield* request(`${yield* baseUrl}/duplicate`)
      expect(duplicate.status).toBe(409)
      expect(duplicate.body).toMatchObject({ _tag: "Conflict" })
      const bug = yield* request(`${yield* baseUrl}/bug`)
      expect(bug.status).toBe(500)
      expect(bug.body).toEqual({ _tag: "InternalError", message: "internal error", requestId: expect.any(String) })
      expect(bug.headers.get("retry-after")).toBeNull()
    })
  )
})
