import { Deferred, Effect, Ref } from "effect"
import type { Scope } from "effect"
import { mkdirSync } from "node:fs"
import { spawnLong, waitUntil } from "./processes"
import type { Spawned } from "./processes"

export const resultsDir = "test-results/faults"

export interface ServiceOptions {
  readonly name: string
  readonly port: number
  readonly databaseUrl: string
  readonly redisUrl: string
  readonly env?: Record<string, string>
}

export interface ServiceInstance {
  readonly base: string
  /** The running process (the latest start). */
  readonly process: Effect.Effect<Spawned>
  /** Starts (again) and waits until the service is ready; returns how long that took in ms. */
  readonly start: Effect.Effect<number, Error, Scope.Scope>
  readonly logFile: string
}

/**
 * GET `path` with a bound; the status, or 0 when nothing answered. Used for
 * probes only, never for the measured traffic.
 */
export const probe = (url: string, timeoutMs = 2000) =>
  Effect.promise(async () => {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) })
      await response.arrayBuffer()
      return response.status
    } catch {
      return 0
    }
  })

/**
 * Whether the service takes traffic: `GET /api/health/ready` is 200. A build
 * without that route (404) falls back to `GET /api/health`, so the suite can
 * still measure it; the scenarios that test readiness itself ask the route.
 */
export const isReady = (base: string) =>
  Effect.gen(function* () {
    const ready = yield* probe(`${base}/api/health/ready`)
    if (ready === 404) return (yield* probe(`${base}/api/health`)) === 200
    return ready === 200
  })

/**
 * The service as a child process (`node --import tsx src/main.ts`) on the
 * given port, its output appended to test-results/faults/<name>.service.log.
 * Killed by its pid when the scope closes.
 */
export const makeService = (options: ServiceOptions): Effect.Effect<ServiceInstance> =>
  Effect.gen(function* () {
    mkdirSync(resultsDir, { recursive: true })
    const base = `http://127.0.0.1:${options.port}`
    const logFile = `${resultsDir}/${options.name}.service.log`
    const current = yield* Ref.make<Spawned | undefined>(undefined)
    const env: Record<string, string> = {}
    for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value
    Object.assign(env, {
      DATABASE_URL: options.databaseUrl,
      REDIS_URL: options.redisUrl,
      HOST: "127.0.0.1",
      PORT: String(options.port),
      QUEUE_POLL_MS: "100",
      JOB_RETRY_BASE_MS: "100",
      PRESENCE_HEARTBEAT_MS: "2000",
      BROADCAST_KEEPALIVE_MS: "2000",
      LOG_LEVEL: "WARN",
      ...options.env
    })
    const start = Effect.gen(function* () {
      const started = Date.now()
      const spawned = yield* spawnLong(process.execPath, ["--import", "tsx", "src/main.ts"], { env, logFile })
      yield* Ref.set(current, spawned)
      yield* waitUntil(
        `${options.name}: the service (pid ${spawned.pid}) becomes ready at ${base}`,
        Effect.gen(function* () {
          if (yield* Deferred.isDone(spawned.exited)) {
            const exit = yield* Deferred.await(spawned.exited)
            return yield* Effect.die(
              new Error(`${options.name}: the service exited during start-up (${JSON.stringify(exit)}); see ${logFile}`)
            )
          }
          return yield* isReady(base)
        }),
        "90 seconds",
        "200 millis"
      )
      return Date.now() - started
    })
    return {
      base,
      logFile,
      start,
      process: Effect.flatMap(Ref.get(current), (spawned) =>
        spawned === undefined ? Effect.die(new Error("the service was not started")) : Effect.succeed(spawned)
      )
    }
  })
