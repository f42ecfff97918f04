import { Effect, Ref } from "effect"
import type { Scope } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { connect } from "node:net"
import { join } from "node:path"
import { freePort } from "../../support/freePort"
import { onProcessExit, spawnLong, waitUntil } from "./processes"
import type { Spawned } from "./processes"

export interface TestRedis {
  readonly port: number
  readonly url: string
  /** SIGKILL the server (an outage); waits until it is gone. */
  readonly kill: Effect.Effect<void, Error>
  /** Starts it again on the same port; returns once it answers PING. */
  readonly start: Effect.Effect<void, Error, Scope.Scope>
}

/** True when a Redis answers PING on `port` within a second. */
const ping = (port: number) =>
  Effect.callback<boolean>((resume) => {
    const socket = connect({ host: "127.0.0.1", port })
    const done = (ok: boolean) => {
      socket.destroy()
      resume(Effect.succeed(ok))
    }
    socket.setTimeout(1000, () => done(false))
    socket.once("error", () => done(false))
    socket.once("connect", () => socket.write("PING\r\n"))
    socket.once("data", (data) => done(data.toString().startsWith("+PONG")))
    return Effect.sync(() => socket.destroy())
  })

/**
 * A throw-away Redis on a free loopback port (no persistence). Each start is
 * a child of the test, killed by its pid when the scope closes; the working
 * directory is removed. Never touches the machine's Redis.
 */
export const startRedis: Effect.Effect<TestRedis, Error, Scope.Scope> = Effect.gen(function* () {
  const port = yield* freePort
  const dir = yield* Effect.acquireRelease(
    Effect.sync(() => {
      const dir = mkdtempSync("/tmp/faultsuite-redis-")
      return { dir, unregister: onProcessExit(() => rmSync(dir, { recursive: true, force: true })) }
    }),
    ({ dir, unregister }) =>
      Effect.sync(() => {
        unregister()
        rmSync(dir, { recursive: true, force: true })
      })
  ).pipe(Effect.map(({ dir }) => dir))
  const current = yield* Ref.make<Spawned | undefined>(undefined)
  const start = Effect.gen(function* () {
    const spawned = yield* spawnLong(
      "redis-server",
      [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--daemonize",
        "no",
        "--dir",
        dir
      ],
      { logFile: join(dir, "redis.log") }
    )
    yield* Ref.set(current, spawned)
    yield* waitUntil(`Redis on port ${port} answers PING`, ping(port), "20 seconds")
  })
  yield* start
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    kill: Effect.gen(function* () {
      const spawned = yield* Ref.get(current)
      if (spawned === undefined) return
      yield* spawned.signal("SIGKILL")
      const exit = yield* spawned.awaitExit("10 seconds")
      if (exit === undefined) return yield* Effect.fail(new Error("Redis did not end within 10 s of SIGKILL"))
      yield* Ref.set(current, undefined)
    }),
    start
  }
})
