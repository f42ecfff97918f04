import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Layer, Option, References, Scope } from "effect"
import { TracingLive } from "../../src/app/TracingLive"
import { AppConfig } from "../../src/config/AppConfig"
import { clientFor, createRecord, signedInMember } from "../support/api"
import { request } from "../support/http"
import type { ReceivedSpan } from "../support/otlpCollector"
import { isSqlStatementSpan, otlpCollector } from "../support/otlpCollector"
import { baseUrl, freshWorkspace, testApp, uniqueSuffix } from "../support/TestApp"

/** `span`'s ancestors up to its trace's root, among `spans`. */
const ancestorsOf = (span: ReceivedSpan, spans: ReadonlyArray<ReceivedSpan>) => {
  const chain: Array<ReceivedSpan> = []
  for (let parent = span.parentSpanId; parent !== undefined; ) {
    const next = spans.find((candidate) => candidate.spanId === parent)
    if (next === undefined) break
    chain.push(next)
    parent = next.parentSpanId
  }
  return chain
}

/** The spans of a record create's trace, found by the request id it was sent with. */
const traceOf = (spans: ReadonlyArray<ReceivedSpan>, requestId: string) => {
  const server = spans.find((span) => span.kind === 2 && span.attributes["http.request.id"] === requestId)
  if (server === undefined) return undefined
  const inTrace = spans.filter((span) => span.traceId === server.traceId)
  const unit = inTrace.find((span) => span.name === "unit of work")
  const sql = inTrace.filter(isSqlStatementSpan)
  const publish = inTrace.find((span) => span.name === "broadcast publish")
  return { server, inTrace, unit, sql, publish }
}

describe("traces", () => {
  // Live: the app's exporter and workers run on the real clock (the test clock would never let them fire).
  it.live(
    "with OTEL_EXPORTER_OTLP_ENDPOINT set, a write's HTTP, unit-of-work, SQL and publish spans reach the collector in one trace",
    () =>
      Effect.gen(function* () {
        const collector = yield* otlpCollector
        const serviceName = `traces-test-${uniqueSuffix()}`
        const app = yield* Layer.build(
          testApp({
            otelEndpoint: Option.some(collector.url),
            otelServiceName: serviceName,
            otelExportInterval: Duration.millis(100)
          })
        )
        yield* Effect.gen(function* () {
          const base = yield* baseUrl
          const { user, cookie } = yield* signedInMember(base, yield* freshWorkspace)
          const requestId = `trace-${uniqueSuffix()}`
          const record = yield* createRecord(clientFor(base, cookie, { "x-request-id": requestId }), "crm/deal", {
            title: "Traced"
          })

          yield* collector.awaitSpans((spans) => {
            const trace = traceOf(spans, requestId)
            return trace?.unit !== undefined && trace.sql.length > 0 && trace.publish !== undefined
          })
          const trace = traceOf(collector.spans, requestId)
          if (trace?.unit === undefined || trace.publish === undefined) throw new Error("unreachable: awaited above")

          expect(trace.server.serviceName).toBe(serviceName)
          expect(trace.server.attributes["http.request.method"]).toBe("POST")
          expect(trace.server.attributes["http.response.status_code"]).toBe("201")
          // Credentials are never span attributes.
          expect(trace.server.attributes["http.request.header.cookie"]).not.toContain(cookie)

          expect(trace.unit.attributes).toMatchObject({
            "actor.kind": "user",
            "actor.id": user.id,
            "workspace.slug": expect.stringMatching(/^t-/)
          })
          expect(trace.unit.attributes["correlation.id"]).toMatch(/^[0-9a-f-]{36}$/)
          expect(ancestorsOf(trace.unit, trace.inTrace)).toContainEqual(trace.server)
          // The unit's statements are under it: its INSERT of the record among them.
          const unitStatements = trace.sql.filter((span) => ancestorsOf(span, trace.inTrace).includes(trace.unit!))
          expect(unitStatements.length).toBeGreaterThan(0)
          // Every statement span, the unit's hand-sent ones (`executeFixed`) too, is named as Effect 4 names them:
          // by the database (db.namespace), and carries the client's attributes.
          expect(trace.sql.filter((span) => span.name !== span.attributes["db.namespace"])).toEqual([])
          expect(unitStatements.some((span) => span.attributes["db.query.text"]?.includes("INSERT INTO"))).toBe(true)
          expect(trace.publish.attributes).toMatchObject({
            "business_object.id": record.id,
            "broadcast.type": "changed"
          })
          expect(ancestorsOf(trace.publish, trace.inTrace)).toContainEqual(trace.server)

          // Health probes make no trace: neither a server span nor a root SQL span.
          const before = collector.spans.length
          yield* request(`${base}/api/health/ready`)
          const probeId = `probe-${uniqueSuffix()}`
          yield* request(`${base}/api/health/live`, { headers: { "x-request-id": probeId } })
          yield* createRecord(clientFor(base, cookie, { "x-request-id": `${probeId}-after` }), "crm/deal", {
            title: "After the probes"
          })
          yield* collector.awaitSpans((spans) => traceOf(spans, `${probeId}-after`)?.unit !== undefined)
          const after = collector.spans.slice(before)
          expect(after.some((span) => span.attributes["url.path"]?.startsWith("/api/health"))).toBe(false)
          const traced = new Set(after.filter((span) => span.kind === 2).map((span) => span.traceId))
          expect(after.filter((span) => !traced.has(span.traceId) && isSqlStatementSpan(span))).toEqual([])
        }).pipe(Effect.provide(app))
      }),
    60_000
  )

  it.live("with it unset, tracing is off and nothing is sent, not even when the app stops", () =>
    Effect.gen(function* () {
      const collector = yield* otlpCollector
      const scope = yield* Scope.make()
      const app = yield* Layer.buildWithScope(testApp({ otelEndpoint: Option.none() }), scope)
      yield* Effect.gen(function* () {
        const base = yield* baseUrl
        const { cookie } = yield* signedInMember(base, yield* freshWorkspace)
        yield* createRecord(clientFor(base, cookie), "crm/deal", { title: "Untraced" })
      }).pipe(Effect.provide(app), Effect.scoped)
      // Stopping would send whatever an exporter had buffered.
      yield* Scope.close(scope, Exit.void)
      const sentinel = yield* request(`${collector.url}/sentinel`)
      expect(sentinel.status).toBe(200)
      expect(collector.requests).toEqual(["GET /sentinel"])
    })
  )

  it.effect("with it unset, a span is the no-op span (near-zero cost)", () =>
    Effect.gen(function* () {
      const { enabled, span } = yield* Effect.gen(function* () {
        const enabled = yield* References.TracerEnabled
        const span = yield* Effect.withSpan(Effect.currentSpan, "unit of work")
        return { enabled, span }
      }).pipe(Effect.provide(TracingLive), Effect.provide(AppConfig.make({ otelEndpoint: Option.none() })))
      expect(enabled).toBe(false)
      // The no-op span is never sampled; a recorded one always is.
      expect(span.sampled).toBe(false)
    })
  )
})
