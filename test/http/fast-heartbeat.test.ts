import { describe, expect, it } from "@effect/vitest"
import { type Context, Duration, Effect, Layer, Logger, Metric, Option, References } from "effect"
import { ApiKeys } from "../../src/auth/ApiKeys"
import { Roles } from "../../src/auth/Roles"
import { routeLabel } from "../../src/http/RequestMetrics"
import { fastRouteAnswers } from "../../src/metrics/ServiceMetrics"
import { clientFor, createRecord, recordsOf, signedInMember } from "../support/api"
import { request } from "../support/http"
import { otlpCollector } from "../support/otlpCollector"
import { appLayer } from "../../src/app/AppLayer"
import { baseUrl, freshWorkspace, testConfig } from "../support/TestApp"

const deal = "crm/deal"
const missingRecord = "00000000-0000-4000-8000-000000000000"

/** Every log line both apps write, with its annotations. */
const logLines: Array<{ readonly message: string; readonly annotations: Record<string, unknown> }> = []
const CapturingLogger = Layer.merge(
  Logger.layer([
    Logger.make(({ fiber, message }) => {
      logLines.push({
        message: Array.isArray(message) ? message.join(" ") : String(message),
        annotations: { ...fiber.getRef(References.CurrentLogAnnotations) }
      })
    })
  ]),
  Layer.succeed(References.MinimumLogLevel, "Info")
)
const app = (overrides: Parameters<typeof testConfig>[0] = {}) =>
  appLayer(testConfig(overrides)).pipe(Layer.provide(CapturingLogger))

/** Headers that differ between any two answers (time, connection handling) or are checked on their own. */
const unstable = new Set(["date", "connection", "keep-alive", "content-length", "x-request-id"])

interface Answer {
  readonly name: string
  readonly status: number
  readonly headers: ReadonlyArray<readonly [string, string]>
  readonly body: string
  readonly echoedRequestId: boolean
  /** The request's `request` log line: method, path, status. */
  readonly logged: ReadonlyArray<string>
}

const fastAnswers = Metric.withAttributes(fastRouteAnswers, { route: routeLabel("PUT", "/api/presence/-/-/-/-") })

/**
 * The same heartbeats, good and bad, sent to the app in `context`; answers
 * normalized (this app's ids and slug replaced) so two apps' can be compared.
 */
const heartbeatsTo = (context: Context.Context<Layer.Success<ReturnType<typeof app>>>, idPrefix: string) =>
  Effect.gen(function* () {
    const base = yield* baseUrl
    const workspace = yield* freshWorkspace
    const { cookie } = yield* signedInMember(base, workspace)
    const client = clientFor(base, cookie)
    const record = yield* createRecord(client, deal, { title: "Fast" })
    const archived = yield* createRecord(client, deal, { title: "Shelved" })
    yield* recordsOf(client, deal).archive(archived.id)
    yield* (yield* Roles).grant(workspace, "deal-reader", deal, "read")
    const reader = yield* signedInMember(base, workspace, "deal-reader")
    const { key } = yield* Effect.flatMap(ApiKeys, (keys) => keys.create(workspace, "Presence bot", "admin"))

    const at = (recordId: string, editor: string) => `/api/presence/crm/deal/${recordId}/${editor}`
    const cases: ReadonlyArray<readonly [string, string, RequestInit & { origin?: null }]> = [
      ["join", at(record.id, "tab-1"), { headers: { cookie } }],
      ["renew", at(record.id, "tab-1"), { headers: { cookie } }],
      ["with a query", `${at(record.id, "tab-1")}?ignored=1`, { headers: { cookie } }],
      ["percent-encoded editor", at(record.id, "tab%2D2"), { headers: { cookie } }],
      ["API key", at(record.id, "bot-1"), { headers: { authorization: `Bearer ${key}` }, origin: null }],
      [
        "with a JSON body",
        at(record.id, "tab-1"),
        { headers: { cookie, "content-type": "application/json" }, body: "{}" }
      ],
      ["bad editor id", at(record.id, "tab!"), { headers: { cookie } }],
      ["bad percent-encoding", at(record.id, "%E0%A4%A"), { headers: { cookie } }],
      ["missing record", at(missingRecord, "tab-1"), { headers: { cookie } }],
      ["archived record", at(archived.id, "tab-1"), { headers: { cookie } }],
      ["unknown business object", "/api/presence/crm/nothing/x/tab-1", { headers: { cookie } }],
      ["reader", at(record.id, "tab-3"), { headers: { cookie: reader.cookie } }],
      ["no credential", at(record.id, "tab-1"), {}],
      ["unknown session", at(record.id, "tab-1"), { headers: { cookie: "session=not-a-session" } }],
      ["revoked-looking key", at(record.id, "tab-1"), { headers: { authorization: "Bearer nope" }, origin: null }],
      ["foreign page", at(record.id, "tab-1"), { headers: { cookie, origin: "https://evil.example" } }],
      ["cookie without Origin", at(record.id, "tab-1"), { headers: { cookie }, origin: null }]
    ]

    const normalize = (text: string) =>
      text
        .replaceAll(record.id, "<record>")
        .replaceAll(archived.id, "<archived>")
        .replaceAll(workspace.slug, "<workspace>")
        .replaceAll(workspace.id, "<workspace-id>")
        .replaceAll(reader.user.name, "<reader>")
        // An id cut short in a message (`27de9119-2fd0-4dc…`).
        .replace(/[0-9a-f]{8}-[0-9a-f-]*…/g, "<id>…")
    const answers: Array<Answer> = []
    for (const [index, [name, path, init]] of cases.entries()) {
      const { headers, ...rest } = init
      const sentRequestId = `${idPrefix}-${index}`
      const response = yield* request(`${base}${path}`, {
        method: "PUT",
        ...rest,
        headers: { "x-request-id": sentRequestId, ...headers }
      })
      answers.push({
        name,
        status: response.status,
        headers: [...response.headers.entries()].filter(([header]) => !unstable.has(header)).sort(),
        body: normalize(JSON.stringify(response.body) ?? "").replaceAll(sentRequestId, "<request-id>"),
        echoedRequestId: response.headers.get("x-request-id") === sentRequestId,
        logged: logLines
          .filter((line) => line.message === "request" && line.annotations.requestId === sentRequestId)
          .map(({ annotations }) => normalize(`${annotations.method} ${annotations.path} ${annotations.status}`))
      })
    }
    return answers
  }).pipe(Effect.provide(context))

describe("the presence heartbeat's fast route", () => {
  // Live: the traced app's exporter runs on the real clock.
  it.live("answers every heartbeat exactly as the HttpApi stack does, and takes only the plain ones", () =>
    Effect.gen(function* () {
      const collector = yield* otlpCollector
      const fast = yield* Layer.build(app())
      // With tracing on there is no fast route: this instance serves every request through the stack.
      const stack = yield* Layer.build(
        app({ otelEndpoint: Option.some(collector.url), otelExportInterval: Duration.millis(100) })
      )

      const before = (yield* Metric.value(fastAnswers)).count
      const viaStack = yield* heartbeatsTo(stack, "stack")
      const afterStack = (yield* Metric.value(fastAnswers)).count
      const viaFast = yield* heartbeatsTo(fast, "fast")
      const afterFast = (yield* Metric.value(fastAnswers)).count

      expect(viaFast).toEqual(viaStack)
      expect(viaFast.map(({ name, status }) => [name, status])).toEqual([
        ["join", 204],
        ["renew", 204],
        ["with a query", 204],
        ["percent-encoded editor", 204],
        ["API key", 204],
        ["with a JSON body", 204],
        ["bad editor id", 400],
        ["bad percent-encoding", viaStack[7]?.status],
        ["missing record", 404],
        ["archived record", 409],
        ["unknown business object", 404],
        ["reader", 403],
        ["no credential", 401],
        ["unknown session", 401],
        ["revoked-looking key", 401],
        ["foreign page", 403],
        ["cookie without Origin", 403]
      ])
      expect(viaFast.every((answer) => answer.echoedRequestId)).toBe(true)
      // One log line per request, on either path (a request handed back to the stack is logged once, by it).
      expect(viaFast.every((answer) => answer.logged.length === 1)).toBe(true)
      // The five plain heartbeats, and only those, were the fast route's own answers.
      expect(afterStack - before).toBe(0)
      expect(afterFast - afterStack).toBe(5)
    })
  )
})
