import { Effect } from "effect"
import type { Scope } from "effect"
import { clientFor } from "../../support/api"
import { Refusal } from "../../support/apiCaller"
import type { Client } from "../../support/api"
import { sessionCookieOf } from "../../support/http"
import { login } from "../../support/login"
import type { Credentials } from "../../support/login"
import { openSse } from "../../support/sse"
import type { SseStream } from "../../support/sse"
import { servedBy } from "./instances"
import type { Instance } from "./instances"

/** One request of the flow and the instance that served it. */
export interface Served {
  readonly step: string
  readonly instance: number
}

export interface Sent<A> {
  readonly value: A
  readonly instance: number
}

/**
 * Requests through the proxy only, each with a request id of its own, and
 * which instance served each (from the instances' logs): the flow's ledger.
 */
export const viaProxy = (base: string, instances: ReadonlyArray<Instance>, runId: string) => {
  const served: Array<Served> = []
  let count = 0
  const nextId = (step: string) => `${runId}-${++count}-${step}`.slice(0, 128)
  const record = (step: string, id: string) =>
    Effect.tap(servedBy(instances, id), (instance) => Effect.sync(() => served.push({ step, instance })))

  /** One request of `cookie`'s ("" for none) through the proxy; `extra` headers on top. */
  const send = <A, E>(
    step: string,
    cookie: string,
    request: (client: Client) => Effect.Effect<A, E>,
    extra: Record<string, string> = {}
  ): Effect.Effect<Sent<A>, E> =>
    Effect.gen(function* () {
      const id = nextId(step)
      const value = yield* request(clientFor(base, cookie, { "x-request-id": id, ...extra }))
      return { value, instance: yield* record(step, id) }
    })

  /** Signs in through the proxy: the session cookie and the instance that made the session. */
  const signIn = (step: string, credentials: Credentials): Effect.Effect<Sent<string>> =>
    Effect.gen(function* () {
      const id = nextId(step)
      const answer = yield* login(base, credentials, { "x-request-id": id })
      if (answer.status !== 200)
        return yield* Effect.die(
          new Error(
            `${step}: sign-in answered ${answer.status}: ${JSON.stringify(answer instanceof Refusal ? answer.body : "")}`
          )
        )
      return { value: sessionCookieOf(answer), instance: yield* record(step, id) }
    })

  /** An SSE stream opened through the proxy (closed with the scope). */
  const stream = (
    step: string,
    path: string,
    headers: Record<string, string>
  ): Effect.Effect<Sent<SseStream>, never, Scope.Scope> =>
    Effect.gen(function* () {
      const id = nextId(step)
      const sse = yield* openSse(`${base}${path}`, { ...headers, "x-request-id": id })
      if (sse.status !== 200) return yield* Effect.die(new Error(`${step}: the stream answered ${sse.status}`))
      return { value: sse, instance: yield* record(step, id) }
    })

  /**
   * Streams opened one after another until they are held on every instance
   * (round robin gets there in one turn; the bound is for a proxy that does not).
   */
  const streamOnEvery = (step: string, path: string, headers: Record<string, string>) =>
    Effect.gen(function* () {
      const streams: Array<Sent<SseStream>> = []
      for (let tries = 0; new Set(streams.map((s) => s.instance)).size < instances.length; tries++) {
        if (tries === instances.length * 3) {
          return yield* Effect.die(new Error(`${step}: ${tries} streams did not reach every instance`))
        }
        streams.push(yield* stream(step, path, headers))
      }
      return streams
    })

  /**
   * A read sent again until an instance outside `exclude` serves it: for a
   * step that must land elsewhere than where the session or the write was
   * made. Only for requests that change nothing.
   */
  const readElsewhere = <A, E>(
    step: string,
    cookie: string,
    exclude: ReadonlyArray<number>,
    request: (client: Client) => Effect.Effect<A, E>
  ): Effect.Effect<Sent<A>, E> =>
    Effect.gen(function* () {
      for (let tries = 0; tries < instances.length * 3; tries++) {
        const sent = yield* send(step, cookie, request)
        if (!exclude.includes(sent.instance)) return sent
      }
      return yield* Effect.die(new Error(`${step}: never served outside instances ${exclude.join(", ")}`))
    })

  return { send, signIn, stream, streamOnEvery, readElsewhere, served: Effect.sync(() => [...served]) }
}
