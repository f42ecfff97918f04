import { Effect } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

/** An OTLP/JSON attribute value, as the exporter writes it. */
type OtlpValue = {
  readonly stringValue?: string
  readonly intValue?: number | string
  readonly boolValue?: boolean
  readonly doubleValue?: number
}

interface OtlpSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly kind: number
  readonly attributes: ReadonlyArray<{ readonly key: string; readonly value: OtlpValue }>
}

interface TracesRequest {
  readonly resourceSpans: ReadonlyArray<{
    readonly resource: { readonly attributes: ReadonlyArray<{ readonly key: string; readonly value: OtlpValue }> }
    readonly scopeSpans: ReadonlyArray<{ readonly spans: ReadonlyArray<OtlpSpan> }>
  }>
}

/** A received span, its attributes flattened to strings, with its resource's `service.name`. */
export interface ReceivedSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string | undefined
  readonly name: string
  /** OTLP's SpanKind: 2 is a server span. */
  readonly kind: number
  readonly attributes: Readonly<Record<string, string>>
  readonly serviceName: string | undefined
}

/**
 * A span of one SQL statement: a client span (OTLP kind 3) of PostgreSQL. Effect 4 names it as
 * OpenTelemetry's database conventions say (the database, or the server's address), not by one fixed name.
 */
export const isSqlStatementSpan = (span: ReceivedSpan): boolean =>
  span.kind === 3 && span.attributes["db.system.name"] === "postgresql"

const text = (value: OtlpValue): string =>
  String(value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue ?? "")

const flatten = (attributes: ReadonlyArray<{ readonly key: string; readonly value: OtlpValue }>) =>
  Object.fromEntries(attributes.map(({ key, value }) => [key, text(value)]))

/**
 * An in-process OTLP/HTTP collector on a free port: takes `POST /v1/traces`
 * (JSON), answers 200 and keeps every span. Every request it gets, of any
 * path, is counted in `requests`. Closed with the scope.
 */
export const otlpCollector = Effect.acquireRelease(
  Effect.callback<{
    readonly url: string
    readonly spans: Array<ReceivedSpan>
    readonly requests: Array<string>
    readonly awaitSpans: (done: (spans: ReadonlyArray<ReceivedSpan>) => boolean) => Effect.Effect<void>
    readonly close: () => void
  }>((resume) => {
    const spans: Array<ReceivedSpan> = []
    const requests: Array<string> = []
    const waiters = new Set<() => void>()
    const server = createServer((request, response) => {
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => {
        requests.push(`${request.method} ${request.url}`)
        if (request.method === "POST" && request.url === "/v1/traces") {
          // The test's own collector: what the exporter sends is OTLP JSON, checked by the assertions that read it.
          const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as TracesRequest
          for (const resourceSpans of body.resourceSpans) {
            const serviceName = flatten(resourceSpans.resource.attributes)["service.name"]
            for (const scope of resourceSpans.scopeSpans)
              for (const span of scope.spans)
                spans.push({
                  traceId: span.traceId,
                  spanId: span.spanId,
                  parentSpanId: span.parentSpanId === "" ? undefined : span.parentSpanId,
                  name: span.name,
                  kind: span.kind,
                  attributes: flatten(span.attributes),
                  serviceName
                })
          }
        }
        response.writeHead(200, { "content-type": "application/json" }).end("{}")
        for (const wake of waiters) wake()
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo // listening on TCP: the address is an AddressInfo
      resume(
        Effect.succeed({
          url: `http://127.0.0.1:${port}`,
          spans,
          requests,
          awaitSpans: (done) =>
            Effect.callback<void>((wake) => {
              const check = () => {
                if (!done(spans)) return
                waiters.delete(check)
                wake(Effect.void)
              }
              waiters.add(check)
              check()
              return Effect.sync(() => waiters.delete(check))
            }),
          close: () => {
            server.closeAllConnections()
            server.close()
          }
        })
      )
    })
  }),
  (collector) => Effect.sync(collector.close)
)
