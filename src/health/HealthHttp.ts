import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { BroadcastBus } from "../broadcast/BroadcastBus"
import { DatabaseInfo } from "../db/Database"
import { Api } from "../http/Api"
import { HealthReport, Unhealthy } from "./HealthApi"

const probeTimeout = "2 seconds"

export const HealthHttp = HttpApiBuilder.group(Api, "health", (handlers) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const database = yield* DatabaseInfo
    const bus = yield* BroadcastBus

    const databaseUp = sql`SELECT 1`.pipe(
      Effect.as(true),
      Effect.timeoutTo({ duration: probeTimeout, onTimeout: () => false, onSuccess: (up) => up }),
      Effect.orElseSucceed(() => false)
    )
    const pubsubUp = bus.isHealthy.pipe(
      Effect.timeoutTo({ duration: probeTimeout, onTimeout: () => false, onSuccess: (up) => up })
    )

    return handlers.handle("health", () =>
      Effect.gen(function* () {
        const [db, pubsub] = yield* Effect.all([databaseUp, pubsubUp], { concurrency: 2 })
        const report = {
          database: { status: db ? "up" : "down", kind: database.kind },
          pubsub: { status: pubsub ? "up" : "down", kind: bus.kind },
          broadcast: yield* bus.status
        } as const
        if (db && pubsub) return new HealthReport(report)
        return yield* new Unhealthy({ message: "a dependency does not answer", ...report })
      })
    )
  })
)
