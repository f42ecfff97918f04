import { Effect } from "effect"
import { performance } from "node:perf_hooks"

export type ExchangeKind = "create" | "update" | "page" | "read" | "probe" | "login" | "setup"

/** One request the harness sent and what came back. */
export interface Exchange {
  readonly kind: ExchangeKind
  readonly method: string
  readonly path: string
  /** ms since the scenario's clock started (`performance.now()` based). */
  readonly startedAt: number
  readonly endedAt: number
  /** undefined: no HTTP answer (connection refused or reset, or the harness's own timeout). */
  readonly status: number | undefined
  readonly retryAfter: string | null
  readonly error?: string
  readonly body: unknown
}

/** Every exchange of a scenario, in the order they ended. */
export class Recorder {
  readonly exchanges: Array<Exchange> = []
  private readonly origin = performance.now()
  now(): number {
    return performance.now() - this.origin
  }
}

export interface SendOptions {
  readonly kind: ExchangeKind
  readonly method?: string
  readonly headers?: Record<string, string>
  readonly json?: unknown
  /** The harness's own bound on one request; past it the request counts as a network error ("timeout"). */
  readonly timeoutMs?: number
}

const parse = (text: string): unknown => {
  if (text.length === 0) return undefined
  try {
    return JSON.parse(text)
  } catch {
    return text.slice(0, 500)
  }
}

/** Sends one request, records it, and returns the exchange. Never fails: a network error is an exchange without status. */
export const send = (recorder: Recorder, base: string, path: string, options: SendOptions) =>
  Effect.promise(async (): Promise<Exchange> => {
    const method = options.method ?? "GET"
    const headers = new Headers(options.headers)
    if (options.json !== undefined) headers.set("content-type", "application/json")
    const startedAt = recorder.now()
    let exchange: Exchange
    try {
      const response = await fetch(`${base}${path}`, {
        method,
        headers,
        body: options.json === undefined ? undefined : JSON.stringify(options.json),
        signal: AbortSignal.timeout(options.timeoutMs ?? 20_000)
      })
      const text = await response.text()
      exchange = {
        kind: options.kind,
        method,
        path,
        startedAt,
        endedAt: recorder.now(),
        status: response.status,
        retryAfter: response.headers.get("retry-after"),
        body: parse(text)
      }
    } catch (error) {
      const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : ""
      exchange = {
        kind: options.kind,
        method,
        path,
        startedAt,
        endedAt: recorder.now(),
        status: undefined,
        retryAfter: null,
        error: error instanceof Error ? `${error.name} ${error.message}${cause}` : String(error),
        body: undefined
      }
    }
    recorder.exchanges.push(exchange)
    return exchange
  })

export const isOk = (exchange: Exchange) =>
  exchange.status !== undefined && exchange.status >= 200 && exchange.status < 300
