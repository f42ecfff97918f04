import { HttpServerResponse } from "effect/http"
import { describe, expect, it, layer } from "@effect/vitest"
import { Arbitrary, Effect, Layer, Logger, Ref, References, Schema } from "effect"
import { maxRequestIdLength, requestIdFrom, withRequestId } from "../../src/http/RequestId"
import { signedInMember } from "../support/api"
import { request } from "../support/http"
import { openSse } from "../support/sse"
import { appLayer } from "../../src/app/AppLayer"
import { baseUrl, freshWorkspace, testConfig } from "../support/TestApp"
import { oneOf } from "../support/arbitraries"

const generated = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

const integer = (minimum: number, maximum: number) => Schema.Int.check(Schema.isBetween({ minimum, maximum }))

const anyText = Arbitrary.schema(Schema.String)

describe("requestIdFrom", () => {
  it.prop(
    "keeps 1-128 visible ASCII characters as they are",
    { id: Schema.String.check(Schema.isPattern(/^[\x21-\x7e]{1,128}$/)) },
    ({ id }) => {
      expect(requestIdFrom(id, () => "new")).toBe(id)
    }
  )

  it.prop(
    "replaces anything else: empty, too long, spaces, control or non-ASCII characters",
    {
      id: oneOf(
        Arbitrary.Constant(""),
        Arbitrary.schema(Schema.String.check(Schema.isBetweenLength(maxRequestIdLength + 1, 400))),
        anyText.pipe(Arbitrary.map((s) => `${s} ${s}`)),
        anyText.pipe(Arbitrary.map((s) => `${s}\r\nSet-Cookie: x=y`)),
        anyText.pipe(Arbitrary.map((s) => `${s}é`))
      )
    },
    ({ id }) => {
      expect(requestIdFrom(id, () => "new")).toBe("new")
    }
  )

  it("generates a UUID when none is sent", () => {
    expect(requestIdFrom(undefined)).toMatch(generated)
  })
})

describe("withRequestId", () => {
  const bodyOf = (response: HttpServerResponse.HttpServerResponse) =>
    response.body._tag === "Uint8Array" ? JSON.parse(new TextDecoder().decode(response.body.body)) : undefined

  it.prop(
    "adds `requestId` to a JSON error's body, keeping every other field",
    { status: integer(400, 599), message: Schema.String },
    ({ status, message }) => {
      const response = HttpServerResponse.jsonUnsafe({ _tag: "Whatever", message }, { status })
      const stamped = withRequestId(response, "req-1")
      expect(stamped.headers["x-request-id"]).toBe("req-1")
      expect(bodyOf(stamped)).toEqual({ _tag: "Whatever", message, requestId: "req-1" })
    }
  )

  it("leaves successes, arrays and non-JSON bodies alone (the header still goes on)", () => {
    for (const response of [
      HttpServerResponse.jsonUnsafe({ ok: true }, { status: 200 }),
      HttpServerResponse.jsonUnsafe([1, 2], { status: 400 }),
      HttpServerResponse.text("not found", { status: 404 })
    ]) {
      const stamped = withRequestId(response, "req-2")
      expect(stamped.headers["x-request-id"]).toBe("req-2")
      expect(stamped.body).toBe(response.body)
    }
  })
})

/** Every log line the app writes, with its annotations. */
const logLines = Ref.makeUnsafe<ReadonlyArray<{ message: unknown; annotations: Record<string, unknown> }>>([])
const capture = Logger.make(({ fiber, message }) => {
  const line = {
    message: Array.isArray(message) ? message.join(" ") : String(message),
    annotations: { ...fiber.getRef(References.CurrentLogAnnotations) }
  }
  Effect.runSync(Ref.update(logLines, (lines) => [...lines, line]))
})
const CapturingLogger = Layer.merge(Logger.layer([capture]), Layer.succeed(References.MinimumLogLevel, "Info"))

// The app at Info (tests' apps log only warnings), its lines kept.
layer(appLayer(testConfig()).pipe(Layer.provide(CapturingLogger)), { excludeTestServices: true })(
  "X-Request-Id over real HTTP",
  (it) => {
    it.effect("an acceptable incoming id is echoed; none or a bad one gets a new one", () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const given = yield* request(`${base}/api/health/live`, { headers: { "x-request-id": "from-the-proxy-42" } })
        expect(given.status).toBe(200)
        expect(given.headers.get("x-request-id")).toBe("from-the-proxy-42")

        const none = yield* request(`${base}/api/health/live`)
        expect(none.headers.get("x-request-id")).toMatch(generated)
        const again = yield* request(`${base}/api/health/live`)
        expect(again.headers.get("x-request-id")).not.toBe(none.headers.get("x-request-id"))

        const tooLong = yield* request(`${base}/api/health/live`, { headers: { "x-request-id": "a".repeat(129) } })
        expect(tooLong.headers.get("x-request-id")).toMatch(generated)
        const spaced = yield* request(`${base}/api/health/live`, { headers: { "x-request-id": "two words" } })
        expect(spaced.headers.get("x-request-id")).toMatch(generated)
      })
    )

    it.effect("every error answer carries it, in the header and as `requestId` in its JSON body", () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const answers = [
          // The error mapping's 404 for an unknown route, and the web page fallback's for /api.
          yield* request(`${base}/api/nothing-here`, { headers: { "x-request-id": "id-404" } }),
          // The request guard: 415 and 403.
          yield* request(`${base}/api/auth/login`, {
            method: "POST",
            headers: { "x-request-id": "id-415", "content-type": "text/plain" },
            body: "hello"
          }),
          yield* request(`${base}/api/auth/login`, {
            method: "POST",
            headers: { "x-request-id": "id-403", origin: "https://evil.example" },
            json: { workspace: "x", email: "a@b.c", password: "p" }
          }),
          // An endpoint's typed error (401), and a payload that does not decode (400).
          yield* request(`${base}/api/auth/me`, { headers: { "x-request-id": "id-401" } }),
          yield* request(`${base}/api/auth/login`, {
            method: "POST",
            headers: { "x-request-id": "id-400" },
            json: { workspace: 1 }
          })
        ]
        expect(answers.map((answer) => answer.status)).toEqual([404, 415, 403, 401, 400])
        for (const answer of answers) {
          const id = answer.headers.get("x-request-id")
          expect(id).toMatch(/^id-\d+$/)
          expect(answer.body).toMatchObject({ _tag: expect.any(String), message: expect.any(String), requestId: id })
        }
      })
    )

    it.effect("the broadcast stream's head carries it", () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const { cookie } = yield* signedInMember(base, yield* freshWorkspace)
        const stream = yield* openSse(`${base}/api/broadcast`, { cookie, "x-request-id": "stream-7" })
        expect(stream.status).toBe(200)
        expect(stream.headers.get("x-request-id")).toBe("stream-7")
      })
    )

    it.effect("the request's log lines carry it", () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        yield* request(`${base}/api/health/live`, { headers: { "x-request-id": "logged-1" } })
        const mine = (yield* Ref.get(logLines)).filter((line) => line.annotations.requestId === "logged-1")
        expect(mine.map((line) => line.message)).toContain("request")
        expect(mine.find((line) => line.message === "request")?.annotations).toMatchObject({
          path: "/api/health/live",
          status: 200
        })
      })
    )
  }
)
