import { Duration, Effect } from "effect"
import type { Scope } from "effect"
import { startService } from "../../support/service"
import type { RunningService } from "../../support/service"

/** The compiled service as a deployment runs it (README, "Build and start"). */
const compiled = [process.execPath, "--max-semi-space-size=4", "dist/server/main.js"]

export interface Instance {
  /** 1-based, as the test names them. */
  readonly n: number
  readonly port: number
  readonly service: RunningService
}

/**
 * `count` compiled instances of one deployment, started together on free
 * loopback ports over the tests' PostgreSQL and Redis with `env` (the same
 * for all: they share the database, the Redis prefix and the queues).
 * Each is killed by its pid when the scope closes.
 */
export const startInstances = (
  count: number,
  env: Record<string, string>
): Effect.Effect<ReadonlyArray<Instance>, Error, Scope.Scope> =>
  Effect.forEach(
    Array.from({ length: count }, (_, i) => i + 1),
    (n) =>
      Effect.map(startService({ ...env, LOG_FORMAT: "json" }, compiled), (service) => ({
        n,
        port: Number(new URL(service.base).port),
        service
      })),
    { concurrency: "unbounded" }
  )

/**
 * Which instance served the request with id `requestId`: the one whose log
 * has its `request` line (every request gets one, streams at their open).
 * Waits for the line, since logs arrive over a pipe; a request no instance
 * logged, or two did, fails the test.
 */
export const servedBy = (
  instances: ReadonlyArray<Instance>,
  requestId: string,
  timeout: Duration.Input = "10 seconds"
) =>
  Effect.gen(function* () {
    for (;;) {
      const found: Array<number> = []
      for (const instance of instances) {
        const lines = yield* instance.service.logs
        if (lines.some((line) => line.message === "request" && line.annotations.requestId === requestId))
          found.push(instance.n)
      }
      if (found.length > 1)
        return yield* Effect.die(new Error(`request ${requestId} was logged by instances ${found.join(", ")}`))
      const [n] = found
      if (n !== undefined) return n
      yield* Effect.sleep("20 millis")
    }
  }).pipe(
    Effect.timeoutOrElse({
      duration: timeout,
      orElse: () =>
        Effect.die(
          new Error(
            `no instance logged request ${requestId} within ${Duration.format(Duration.fromInputUnsafe(timeout))}`
          )
        )
    })
  )
