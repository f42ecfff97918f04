import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { Effect, Fiber, Option } from "effect"
import { BroadcastBus } from "../../broadcast/BroadcastBus"
import { DatabaseInfo, DatabaseProbe, ReplicaStatus } from "../../db/Database"
import { ServedApi } from "../ServedApi"
import { HealthReport, Liveness, NotReady, ReadinessReport, Unhealthy } from "../../api/HealthApi"
import { Readiness } from "../../health/Readiness"
import { FeedHealth } from "../../feedPositions/FeedHealth"

/**
 * Health answers within about a second whatever the database does: its
 * probe has a connection of its own (a drained pool cannot hold it up) and a
 * 750 ms budget, and the pub/sub probe the same budget. Both run side by side.
 * Migrations need no check: the server listens only once they are done.
 */
export const HealthHttp = HttpApiBuilder.group(ServedApi, "health", (handlers) =>
  Effect.gen(function* () {
    const probe = yield* DatabaseProbe
    const database = yield* DatabaseInfo
    const bus = yield* BroadcastBus
    const readiness = yield* Readiness
    const replica = yield* ReplicaStatus
    const feed = yield* FeedHealth

    // A probe over its budget is left to end in the background: the answer does not wait for it.
    const pubsubUp = Effect.gen(function* () {
      const probing = yield* Effect.forkDetach(bus.isHealthy)
      return yield* Fiber.join(probing).pipe(
        Effect.timeoutOrElse({
          duration: probe.budget,
          orElse: () => Effect.as(Effect.forkDetach(Fiber.interrupt(probing)), false)
        })
      )
    })

    const components = Effect.gen(function* () {
      const [db, pubsub] = yield* Effect.all([probe.answers, pubsubUp], { concurrency: 2 })
      const standby = yield* replica.health
      return {
        database: { status: db ? "up" : "down", kind: database.kind },
        pubsub: { status: pubsub ? "up" : "down", kind: bus.kind },
        broadcast: yield* bus.status,
        ...(Option.isSome(standby) ? { replica: standby.value } : {}),
        feed: yield* feed.health
      } as const
    })

    return handlers
      .handle("health", () =>
        Effect.gen(function* () {
          const report = yield* components
          if (report.database.status === "up" && report.pubsub.status === "up") return new HealthReport(report)
          return yield* new Unhealthy({ message: "a dependency does not answer", ...report })
        })
      )
      .handle("live", () => Effect.succeed(new Liveness({ status: "live" })))
      .handle("ready", () =>
        Effect.gen(function* () {
          const draining = yield* readiness.isDraining
          const report = yield* components
          if (draining)
            return yield* new NotReady({ message: "draining: the instance is shutting down", draining, ...report })
          if (report.database.status === "down") {
            return yield* new NotReady({ message: "the database does not answer", draining, ...report })
          }
          return new ReadinessReport({
            status: report.pubsub.status === "up" ? "ready" : "degraded",
            draining,
            ...report
          })
        })
      )
  })
)
