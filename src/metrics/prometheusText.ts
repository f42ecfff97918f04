import { Option } from "effect"
import type { MetricLabel, MetricPair } from "effect"
import { MetricState } from "effect"

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
  readonly help: Option.Option<string>
  readonly samples: Array<string>
}

/** The samples one metric (one name and tag set) contributes, and its Prometheus type. */
const samplesOf = (
  name: string,
  tags: ReadonlyArray<readonly [string, string]>,
  state: MetricState.MetricState.Untyped
): { readonly type: Family["type"]; readonly samples: ReadonlyArray<string> } | undefined => {
  const sample = (suffix: string, extra: ReadonlyArray<readonly [string, string]>, value: number | bigint) =>
    `${name}${suffix}${labelsOf([...tags, ...extra])} ${typeof value === "bigint" ? `${value}` : numberOf(value)}`
  if (MetricState.isCounterState(state)) return { type: "counter", samples: [sample("", [], state.count)] }
  if (MetricState.isGaugeState(state)) return { type: "gauge", samples: [sample("", [], state.value)] }
  if (MetricState.isHistogramState(state)) {
    // Effect's buckets are cumulative already, and end with +Inf.
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
  if (MetricState.isSummaryState(state)) {
    return {
      type: "summary",
      samples: [
        ...state.quantiles.flatMap(([q, value]) =>
          Option.isSome(value) ? [sample("", [["quantile", numberOf(q)]], value.value)] : []
        ),
        sample("_sum", [], state.sum),
        sample("_count", [], state.count)
      ]
    }
  }
  if (MetricState.isFrequencyState(state)) {
    return {
      type: "counter",
      samples: Array.from(state.occurrences, ([key, count]) => sample("", [["key", key]], count))
    }
  }
  return undefined
}

const tagsOf = (tags: ReadonlyArray<MetricLabel.MetricLabel>) =>
  tags.map((label) => [label.key, label.value] as const).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))

/**
 * `Metric.snapshot` in the Prometheus text exposition format (0.0.4): one
 * `# HELP` and `# TYPE` per metric name, then its samples, names sorted so
 * the output is stable. Written here rather than taken from a library: no
 * Prometheus exporter is among the project's dependencies.
 */
export const prometheusText = (snapshot: ReadonlyArray<MetricPair.MetricPair.Untyped>): string => {
  const families = new Map<string, Family>()
  for (const pair of snapshot) {
    const name = nameOf(pair.metricKey.name)
    const rendered = samplesOf(name, tagsOf(pair.metricKey.tags), pair.metricState)
    if (rendered === undefined) continue
    const family = families.get(name) ?? { type: rendered.type, help: pair.metricKey.description, samples: [] }
    // One name, one type: a second metric of another type under the same name is left out.
    if (family.type !== rendered.type) continue
    family.samples.push(...rendered.samples)
    families.set(name, family)
  }
  return [...families.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .flatMap(([name, family]) => [
      ...Option.match(family.help, { onNone: () => [], onSome: (help) => [`# HELP ${name} ${escapeHelp(help)}`] }),
      `# TYPE ${name} ${family.type}`,
      ...family.samples
    ])
    .join("\n")
    .concat("\n")
}
