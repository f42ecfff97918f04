import type { HttpServerRequest } from "effect/http"
import { HttpServerResponse } from "effect/http"
import { SqlClient, SqlSchema } from "effect/sql"
import { Context, Duration, Effect, Layer, Option, Schema } from "effect"
import type { Principal } from "../api/Principal"
import { AppConfig } from "../config/AppConfig"
import { Conflict, UnprocessableEntity } from "../api/errors"
import type { Workspace } from "../api/Workspace"
import { CurrentUnit } from "../unitOfWork/CurrentUnit"
import { payloadHash } from "./fingerprint"
import { replayedHeader } from "../api/IdempotencyKey"

type Headers = Readonly<Record<string, string>>

/** What a write route answers when it succeeds: the schema its body is encoded with, its status and headers. */
export interface Answer<A, I> {
  readonly schema: Schema.Codec<A, I>
  readonly status: number
  /** The headers the answer carries (a record's ETag), stored with it so a replay sends them again. */
  readonly headers?: (value: A) => Headers
}

export const ok = <A, I>(schema: Schema.Codec<A, I>, headers?: (value: A) => Headers): Answer<A, I> => ({
  schema,
  status: 200,
  ...(headers === undefined ? {} : { headers })
})
export const created = <A, I>(schema: Schema.Codec<A, I>, headers?: (value: A) => Headers): Answer<A, I> => ({
  schema,
  status: 201,
  ...(headers === undefined ? {} : { headers })
})
export const noContent: Answer<void, void> = { schema: Schema.Void, status: 204 }

/** The answer as a response: its body encoded with its schema, its status and its headers. */
export const respond = <A, I>(answer: Answer<A, I>, value: A) =>
  Effect.map(Effect.orDie(Schema.encodeEffect(answer.schema)(value)), (encoded) => {
    const headers = answer.headers?.(value) ?? {}
    return encoded === undefined
      ? HttpServerResponse.empty({ status: answer.status, headers })
      : HttpServerResponse.jsonUnsafe(encoded, { status: answer.status, headers })
  })

/** The response of a write: the first answer replayed as it was, or a fresh one made with `respond`. */
export const responseOf = <A, I>(answer: Answer<A, I>, result: A | HttpServerResponse.HttpServerResponse) =>
  HttpServerResponse.isHttpServerResponse(result) ? Effect.succeed(result) : respond(answer, result)

/** A write that came with an `Idempotency-Key`: who sent it, and what it asked for. */
export interface KeyedRequest {
  /** The caller the key belongs to: `user:<id>`, `service-account:<id>`, `agent:<id>` or `engine`. */
  readonly caller: string
  readonly key: string
  readonly method: string
  readonly path: string
  /** The decoded payload (its canonical JSON is what a retry must repeat), `undefined` for a route without a body. */
  readonly payload: unknown
}

/** The owner of a principal's keys: two callers' keys never meet. */
export const callerOf = (principal: Principal): string => `${principal.kind}:${principal.id}`

/** The owner of the workflow engine's keys on its write route. */
export const engineCaller = "engine"

/** What a write route handler is given: the request and its decoded headers (and payload, if the route has one). */
export interface WriteCall {
  readonly request: HttpServerRequest.HttpServerRequest
  readonly headers: { readonly "idempotency-key"?: string | undefined }
  readonly payload?: unknown
}

/** The keyed request of a write route's call, if it carries an `Idempotency-Key`. */
export const keyedRequest = (caller: string, call: WriteCall): Option.Option<KeyedRequest> =>
  Option.map(Option.fromNullishOr(call.headers["idempotency-key"]), (key) => ({
    caller,
    key,
    method: call.request.method,
    path: call.request.url.split("?")[0] ?? call.request.url,
    payload: call.payload
  }))

const StoredKey = Schema.Struct({
  method: Schema.String,
  path: Schema.String,
  requestHash: Schema.String,
  status: Schema.NullOr(Schema.Int),
  response: Schema.NullOr(Schema.String),
  headers: Schema.NullOr(Schema.Record(Schema.String, Schema.String))
})
type StoredKey = typeof StoredKey.Type

const shortPath = (path: string) => (path.length > 120 ? `${path.slice(0, 120)}...` : path)

/** The stored first answer, sent again as it was (its headers too), marked as a replay. */
const replay = (first: StoredKey & { readonly status: number }): HttpServerResponse.HttpServerResponse => {
  const headers = { ...first.headers, [replayedHeader]: "true" }
  return first.response === null
    ? HttpServerResponse.empty({ status: first.status, headers })
    : HttpServerResponse.text(first.response, { status: first.status, contentType: "application/json", headers })
}

/**
 * `Idempotency-Key` on the write routes (decisions.md, "Rulings added later";
 * docs/writes.md, "Idempotent retries"). Runs inside the write's unit of
 * work: its first statement claims the caller's key, its last stores the
 * answer, so the key commits with the write or not at all (a failed write
 * leaves no key: its retry runs afresh). A second request with a key whose
 * first is still running waits on the claim's unique index until that one
 * commits (then replays its answer) or rolls back (then runs itself).
 */
export class Idempotency extends Context.Service<Idempotency>()("Idempotency", {
  make: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    const ttlSeconds = Duration.toSeconds(config.idempotencyKeyTtl)

    /** True when the key is this request's now: new, or left over from a request older than the TTL. */
    const claim = (workspace: Workspace, request: KeyedRequest, requestHash: string) =>
      Effect.map(
        sql`INSERT INTO ${sql(workspace.table("idempotency_keys"))} AS k (principal, key, method, path, request_hash)
            VALUES (${request.caller}, ${request.key}, ${request.method}, ${request.path}, ${requestHash})
          ON CONFLICT (principal, key) DO UPDATE
            SET method = EXCLUDED.method, path = EXCLUDED.path, request_hash = EXCLUDED.request_hash,
                status = NULL, response = NULL, created_at = now()
            WHERE k.created_at < now() - make_interval(secs => ${ttlSeconds})
          RETURNING 1`,
        (rows) => rows.length === 1
      ).pipe(Effect.orDie)

    const stored = (workspace: Workspace, request: KeyedRequest) =>
      SqlSchema.findOneOption({
        Request: Schema.Struct({ caller: Schema.String, key: Schema.String }),
        Result: StoredKey,
        execute: ({ caller, key }) => sql`SELECT method, path, request_hash, status, response, headers
            FROM ${sql(workspace.table("idempotency_keys"))} WHERE principal = ${caller} AND key = ${key}`
      })(request).pipe(Effect.orDie)

    const store = (
      workspace: Workspace,
      request: KeyedRequest,
      status: number,
      response: string | null,
      headers: Headers | null
    ) =>
      sql`UPDATE ${sql(workspace.table("idempotency_keys"))}
          SET status = ${status}, response = ${response}, headers = ${headers === null ? null : JSON.stringify(headers)}::jsonb
          WHERE principal = ${request.caller} AND key = ${request.key}`.pipe(Effect.orDie)

    /** The answer to a request whose key is already taken: the first answer, or why not. */
    const answerAgain = (request: KeyedRequest, requestHash: string, first: StoredKey) => {
      if (first.method !== request.method || first.path !== request.path || first.requestHash !== requestHash) {
        const sameRoute = first.method === request.method && first.path === request.path
        const where = sameRoute ? "with another body" : `on ${first.method} ${shortPath(first.path)}`
        return Effect.fail(
          new UnprocessableEntity({
            message: `this Idempotency-Key was already used ${where}: use a new key for a new request`
          })
        )
      }
      // Never committed so (the answer is stored in the claim's own transaction); refused rather than run twice.
      const { status } = first
      if (status === null) {
        return Effect.fail(
          new Conflict({ message: "the first request with this Idempotency-Key has not finished: retry later" })
        )
      }
      return Effect.succeed(replay({ ...first, status }))
    }

    const runKeyed = <A, I, E, R>(
      request: KeyedRequest,
      answer: Answer<A, I>,
      effect: Effect.Effect<A, E, R>
    ): Effect.Effect<A | HttpServerResponse.HttpServerResponse, E | Conflict | UnprocessableEntity, R | CurrentUnit> =>
      Effect.gen(function* () {
        const { workspace } = yield* CurrentUnit
        const requestHash = payloadHash(request.payload)
        // A key pruned between the claim and the read is free again: claim it once more.
        while (!(yield* claim(workspace, request, requestHash))) {
          const first = yield* stored(workspace, request)
          if (Option.isSome(first)) return yield* answerAgain(request, requestHash, first.value)
        }
        const value = yield* effect
        const encoded = yield* Effect.orDie(Schema.encodeEffect(answer.schema)(value))
        const headers = answer.headers?.(value) ?? null
        yield* store(workspace, request, answer.status, encoded === undefined ? null : JSON.stringify(encoded), headers)
        return value
      })

    return {
      /**
       * Inside a unit of work: runs `effect` once per key, answering a retry
       * with the stored first answer (an `HttpServerResponse`). Without a key,
       * just `effect`.
       */
      run: <A, I, E, R>(
        request: Option.Option<KeyedRequest>,
        answer: Answer<A, I>,
        effect: Effect.Effect<A, E, R>
      ): Effect.Effect<
        A | HttpServerResponse.HttpServerResponse,
        E | Conflict | UnprocessableEntity,
        R | CurrentUnit
      > => (Option.isNone(request) ? effect : runKeyed(request.value, answer, effect))
    } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
