import type { Metric } from "effect"

/** The content type of the text exposition format. */
export const prometheusContentType = "text/plain; version=0.0.4; charset=utf-8"

/** A metric or label name as Prometheus accepts it: anything else becomes `_`. */
const nameOf = (name: string) => name.replace(/[^a-zA-Z0-9_:]/g, "_").replace(/^([0-9])/, "_$1")

const escapeLabel = (value: string) => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"')
const escapeHelp = (text: string) => text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")

const labelsOf = (labels: ReadonlyArray<readonly [string, string]>) =>
  labels.length === 0 ? "" : `{${labels.map(([key, value]) => `${nameOf(key)}="${escapeLabel(value)}"`).join(",")}}`

const numberOf = (n: number) => (Number.isNaN(n) ? "NaN" : n === Infinity ? "+Inf" : n === -Infinity ? "-Inf" : `${n}`)

interface Family {
  readonly type: "counter" | "gauge" | "histogram" | "summary"
  readonly help: string | undefined
  readonly samples: Array<string>
}

/** The samples one metric (one name and tag set) contributes, and its Prometheus type. */
const samplesOf = (
  name: string,
  tags: ReadonlyArray<readonly [string, string]>,
  snapshot: Metric.Metric.Snapshot
): { readonly type: Family["type"]; readonly samples: ReadonlyArray<string> } => {
  const sample = (suffix: string, extra: ReadonlyArray<readonly [string, string]>, value: number | bigint) =>
    `${name}${suffix}${labelsOf([...tags, ...extra])} ${typeof value === "bigint" ? `${value}` : numberOf(value)}`
  switch (snapshot.type) {
    case "Counter":
      return { type: "counter", samples: [sample("", [], snapshot.state.count)] }
    case "Gauge":
      return { type: "gauge", samples: [sample("", [], snapshot.state.value)] }
    case "Histogram": {
      const state = snapshot.state
      // Effect's buckets are cumulative already, and may end with +Inf.
      const buckets = state.buckets.map(([le, count]) => sample("_bucket", [["le", numberOf(le)]], count))
      const hasInf = state.buckets.some(([le]) => le === Infinity)
      return {
        type: "histogram",
        samples: [
          ...buckets,
          ...(hasInf ? [] : [sample("_bucket", [["le", "+Inf"]], state.count)]),
          sample("_sum", [], state.sum),
          sample("_count", [], state.count)
        ]
      }
    }
    case "Summary": {
      const state = snapshot.state
      return {
        type: "summary",
        samples: [
          ...state.quantiles.flatMap(([q, value]) =>
            value === undefined ? [] : [sample("", [["quantile", numberOf(q)]], value)]
          ),
          sample("_sum", [], state.sum),
          sample("_count", [], state.count)
        ]
      }
    }
    case "Frequency":
      return {
        type: "counter",
        samples: Array.from(snapshot.state.occurrences, ([key, count]) => sample("", [["key", key]], count))
      }
  }
}

const tagsOf = (attributes: Metric.Metric.AttributeSet | undefined) =>
  Object.entries(attributes ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))

/**
 * `Metric.snapshot` in the Prometheus text exposition format (0.0.4): one
 * `# HELP` and `# TYPE` per metric name, then its samples, names sorted so
 * the output is stable. Written here rather than taken from a library: no
 * Prometheus exporter is among the project's dependencies.
 */
export const prometheusText = (snapshot: ReadonlyArray<Metric.Metric.Snapshot>): string => {
  const families = new Map<string, Family>()
  for (const metric of snapshot) {
    const name = nameOf(metric.id)
    const rendered = samplesOf(name, tagsOf(metric.attributes), metric)
    const family = families.get(name) ?? { type: rendered.type, help: metric.description, samples: [] }
    // One name, one type: a second metric of another type under the same name is left out.
    if (family.type !== rendered.type) continue
    family.samples.push(...rendered.samples)
    families.set(name, family)
  }
  return [...families.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .flatMap(([name, family]) => [
      ...(family.help === undefined ? [] : [`# HELP ${name} ${escapeHelp(family.help)}`]),
      `# TYPE ${name} ${family.type}`,
      ...family.samples
    ])
    .join("\n")
    .concat("\n")
}
