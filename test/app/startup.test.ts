import { describe, expect, it, layer } from "@effect/vitest"
import { Context, Effect, Layer, Logger } from "effect"
import { appLayer, jsonFormat } from "../../src/app/AppLayer"
import { meaningfulLines, runProcess } from "../support/subprocess"
import { baseUrl, testConfig, testDatabaseUrl, testRedisUrl } from "../support/TestApp"
import { request } from "../support/http"

describe("start-up", () => {
  it.live(
    "PORT=not-a-port: a non-zero exit and one line on stderr naming PORT, no stack trace",
    () =>
      Effect.gen(function* () {
        const result = yield* runProcess("npx", ["tsx", "src/main.ts"], {
          PORT: "not-a-port",
          HOST: "127.0.0.1",
          DATABASE_URL: testDatabaseUrl,
          REDIS_URL: testRedisUrl,
          LOG_LEVEL: undefined
        }).pipe(Effect.timeout("60 seconds"))
        expect(result.code).not.toBe(0)
        expect(result.code).not.toBeNull()
        const lines = meaningfulLines(result.stderr)
        expect(lines).toHaveLength(1)
        expect(lines[0]).toMatch(/\bPORT\b/)
        expect(result.stderr).not.toMatch(/^\s+at /m)
        expect(meaningfulLines(result.stdout)).toEqual([])
      }),
    90_000
  )
})

/** A log line as the service writes it (`jsonFormat`, see src/app/AppLayer.ts), parsed back. */
interface LogLine {
  readonly message: unknown
  readonly logLevel: string
  readonly annotations: Record<string, unknown>
  readonly cause?: string
}

/** Every line logged while the layer is up, in order. */
class LogLines extends Context.Service<LogLines, ReadonlyArray<LogLine>>()("test/LogLines") {}

/** Replaces the default logger with the JSON logger the service uses, writing into `LogLines`. */
const CollectedLogs = Layer.unwrap(
  Effect.sync(() => {
    const lines: Array<LogLine> = []
    const collector = Logger.make<unknown, void>((options) => {
      lines.push(JSON.parse(jsonFormat.log(options)) as LogLine)
    })
    return Layer.merge(Layer.succeed(LogLines, lines), Logger.layer([collector]))
  })
)

/** Runs `effect` and returns the log lines written meanwhile. */
const linesDuring = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const lines = yield* LogLines
    const before = lines.length
    const result = yield* effect
    return [result, lines.slice(before)] as const
  })

layer(appLayer(testConfig()).pipe(Layer.provideMerge(CollectedLogs)), { excludeTestServices: true })(
  "the request log",
  (it) => {
    it.effect("one JSON line per request: method, path without the query, status, duration, request id", () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const [response, lines] = yield* linesDuring(request(`${base}/api/health?verbose=1`))
        expect(response.status).toBe(200)
        expect(lines).toHaveLength(1)
        const [line] = lines
        expect(line?.message).toBe("request")
        expect(line?.logLevel).toBe("INFO")
        expect(line?.annotations).toEqual({
          method: "GET",
          path: "/api/health",
          status: 200,
          durationMs: expect.any(Number),
          requestId: response.headers.get("x-request-id")
        })
        expect(line?.annotations.durationMs).toBeGreaterThanOrEqual(0)
      })
    )

    it.effect("failed requests are logged with their status too: 400, 401, 404", () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const cases = [
          {
            url: `${base}/api/auth/login`,
            init: { method: "POST", json: { workspace: 1 } },
            method: "POST",
            path: "/api/auth/login",
            status: 400
          },
          { url: `${base}/api/auth/me`, init: {}, method: "GET", path: "/api/auth/me", status: 401 },
          { url: `${base}/api/no-such-route`, init: {}, method: "GET", path: "/api/no-such-route", status: 404 }
        ]
        for (const { init, method, path, status, url } of cases) {
          const [response, lines] = yield* linesDuring(request(url, init))
          expect(response.status).toBe(status)
          expect(lines.map((line) => [line.message, line.annotations])).toEqual([
            [
              "request",
              { method, path, status, durationMs: expect.any(Number), requestId: response.headers.get("x-request-id") }
            ]
          ])
        }
      })
    )

    it.effect("the credentials a request carries are not logged", () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const secret = "ak_nobody.00000000-0000-0000-0000-000000000000.secretsecretsecretsecretsecretsecretsecr"
        const [response, lines] = yield* linesDuring(
          request(`${base}/api/auth/me`, {
            headers: { authorization: `Bearer ${secret}`, cookie: "session=also-secret" }
          })
        )
        expect(response.status).toBe(401)
        expect(lines).toHaveLength(1)
        expect(JSON.stringify(lines)).not.toContain("secret")
      })
    )
  }
)
