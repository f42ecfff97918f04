import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Layer, Metric, Option, Redacted } from "effect"
import { prometheusText } from "../../src/metrics/prometheusText"
import { createRecord, signedInMember } from "../support/api"
import { request } from "../support/http"
import { openSse } from "../support/sse"
import { baseUrl, freshWorkspace, testApp } from "../support/TestApp"
import { awaitHint } from "../broadcast/streamHelpers"

interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

const metricName = "[a-zA-Z_:][a-zA-Z0-9_:]*"
const labelPair = `[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*"`
const sampleLine = new RegExp(
  `^(${metricName})(?:\\{((?:${labelPair})(?:,${labelPair})*)?\\})? ([-+]?(?:[0-9.]+(?:e[-+]?[0-9]+)?|Inf|NaN))$`
)

/**
 * The Prometheus text format (0.0.4), parsed strictly: every line is a
 * `# HELP`, a `# TYPE` naming a known type before the metric's samples, or a
 * sample; anything else fails the test.
 */
const parsePrometheus = (text: string) => {
  expect(text.endsWith("\n")).toBe(true)
  const types = new Map<string, string>()
  const samples: Array<Sample> = []
  for (const line of text.slice(0, -1).split("\n")) {
    const help = /^# HELP (\S+) .*$/.exec(line)
    if (help !== null) continue
    const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line)
    if (type?.[1] !== undefined && type[2] !== undefined) {
      expect(types.has(type[1]), `TYPE twice for ${type[1]}`).toBe(false)
      types.set(type[1], type[2])
      continue
    }
    const sample = sampleLine.exec(line)
    if (sample === null) throw new Error(`not a Prometheus text line: ${JSON.stringify(line)}`)
    const [, name = "", labelText = "", value = ""] = sample
    const family = name.replace(/_(bucket|sum|count)$/, "")
    expect(types.has(name) || types.has(family), `no TYPE before ${name}`).toBe(true)
    const labels = Object.fromEntries(
      Array.from(labelText.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g), ([, k = "", v = ""]) => [
        k,
        v.replace(/\\(.)/g, (_, escaped: string) => (escaped === "n" ? "\n" : escaped))
      ])
    )
    samples.push({ name, labels, value: value === "+Inf" || value === "Inf" ? Infinity : Number(value) })
  }
  return { types, samples }
}

/** The value of the one sample of `name` whose labels include `labels`; 0 when there is none yet. */
const sampleValue = (samples: ReadonlyArray<Sample>, name: string, labels: Record<string, string> = {}) => {
  const matching = samples.filter(
    (sample) => sample.name === name && Object.entries(labels).every(([k, v]) => sample.labels[k] === v)
  )
  expect(matching.length, `${name} ${JSON.stringify(labels)}`).toBeLessThanOrEqual(1)
  return matching[0]?.value ?? 0
}

describe("prometheusText", () => {
  it.effect("renders counters, gauges and histograms with their labels, escaped", () =>
    Effect.gen(function* () {
      const counter = Metric.counter("unit_test_things_total", { description: "things\ncounted" })
      const gauge = Metric.gauge("unit_test_level")
      const histogram = Metric.histogram("unit_test_seconds", { boundaries: Metric.boundariesFromIterable([0.1, 1]) })
      yield* Metric.update(Metric.withAttributes(counter, { kind: 'a "quoted"\\name' }), 2)
      yield* Metric.update(gauge, -3.5)
      for (const value of [0.05, 0.5, 5]) yield* Metric.update(histogram, value)
      const text = prometheusText(yield* Metric.snapshot)
      expect(text).toContain(
        [
          "# HELP unit_test_things_total things\\ncounted",
          "# TYPE unit_test_things_total counter",
          'unit_test_things_total{kind="a \\"quoted\\"\\\\name"} 2'
        ].join("\n")
      )
      expect(text).toContain("# TYPE unit_test_level gauge\nunit_test_level -3.5")
      expect(text).toContain(
        [
          "# TYPE unit_test_seconds histogram",
          'unit_test_seconds_bucket{le="0.1"} 1',
          'unit_test_seconds_bucket{le="1"} 2',
          'unit_test_seconds_bucket{le="+Inf"} 3',
          "unit_test_seconds_sum 5.55",
          "unit_test_seconds_count 3"
        ].join("\n")
      )
      const { samples } = parsePrometheus(text)
      expect(sampleValue(samples, "unit_test_things_total", { kind: 'a "quoted"\\name' })).toBe(2)
    })
  )
})

const metricsToken = "metrics-token-0123456789abcdef"

layer(testApp({ metricsToken: Option.some(Redacted.make(metricsToken)) }), { excludeTestServices: true })(
  "GET /metrics",
  (it) => {
    const scrape = Effect.gen(function* () {
      const response = yield* request(`${yield* baseUrl}/metrics`, {
        headers: { authorization: `Bearer ${metricsToken}` }
      })
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8")
      if (typeof response.body !== "string") throw new Error("the metrics are not text")
      return parsePrometheus(response.body).samples
    })

    it.effect("needs the token: none or a wrong one is 401", () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        for (const authorization of [undefined, "Bearer wrong-token-0123456789abcdef", `Basic ${metricsToken}`]) {
          const response = yield* request(`${base}/metrics`, {
            headers: authorization === undefined ? {} : { authorization }
          })
          expect(response.status).toBe(401)
          expect(response.headers.get("www-authenticate")).toBe('Bearer realm="metrics"')
          expect(response.body).toMatchObject({ _tag: "Unauthorized" })
        }
      })
    )

    it.effect("parses as Prometheus text and counts requests by route and status, with their latency", () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const live = { method: "GET", route: "/api/health/live", status: "200" }
        const unknown = { method: "GET", route: "unmatched", status: "404" }
        const before = yield* scrape
        for (const _ of [1, 2, 3]) yield* request(`${base}/api/health/live`)
        yield* request(`${base}/api/no-such-route-${Math.random()}`)
        const after = yield* scrape
        expect(sampleValue(after, "http_requests_total", live) - sampleValue(before, "http_requests_total", live)).toBe(
          3
        )
        expect(
          sampleValue(after, "http_requests_total", unknown) - sampleValue(before, "http_requests_total", unknown)
        ).toBe(1)
        const count = (samples: ReadonlyArray<Sample>) =>
          sampleValue(samples, "http_request_duration_seconds_count", live)
        expect(count(after) - count(before)).toBe(3)
        expect(sampleValue(after, "http_request_duration_seconds_bucket", { ...live, le: "+Inf" })).toBe(count(after))
        // Routes are path templates: a record's id never becomes a label.
        expect(after.every((sample) => !/[0-9a-f]{8}-[0-9a-f]{4}/.test(sample.labels.route ?? ""))).toBe(true)
      })
    )

    it.effect("follows writes, audit rows, hints, streams; shows queue depth and connections", () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const { client, cookie } = yield* signedInMember(base, yield* freshWorkspace)
        const before = yield* scrape
        const stream = yield* openSse(`${base}/api/broadcast`, { cookie })
        const record = yield* createRecord(client, "crm/deal", { title: "Counted" })
        yield* awaitHint(stream, record.id)
        const after = yield* scrape
        const moved = (name: string, labels: Record<string, string> = {}) =>
          sampleValue(after, name, labels) - sampleValue(before, name, labels)
        expect(moved("units_of_work_total", { outcome: "committed" })).toBeGreaterThanOrEqual(1)
        expect(moved("audit_rows_written_total")).toBeGreaterThanOrEqual(1)
        expect(moved("broadcast_hints_published_total")).toBeGreaterThanOrEqual(1)
        expect(moved("broadcast_hints_delivered_total")).toBeGreaterThanOrEqual(1)
        expect(sampleValue(after, "broadcast_streams_open")).toBe(1)
        for (const queue of ["jobs", "workflows"]) {
          expect(after.some((s) => s.name === "queue_depth" && s.labels.queue === queue)).toBe(true)
        }
        expect(sampleValue(after, "db_pool_max_connections", { pool: "write" })).toBe(5)
        expect(sampleValue(after, "db_connections", { pool: "write", state: "idle" })).toBeGreaterThanOrEqual(0)
      })
    )
  }
)

describe("GET /metrics without METRICS_TOKEN", () => {
  it.effect("is the API's JSON 404, not the web page", () =>
    Effect.gen(function* () {
      const app = yield* Layer.build(testApp())
      const base = yield* Effect.provide(baseUrl, app)
      const response = yield* request(`${base}/metrics`)
      expect(response.status).toBe(404)
      expect(response.headers.get("content-type")).toMatch(/^application\/json/)
      expect(response.body).toMatchObject({ _tag: "NotFound" })
    })
  )
})
