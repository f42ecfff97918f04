import { SqlClient } from "effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Schema } from "effect"
import { StorageLive } from "../../src/app/AppLayer"
import { ReadSqlClient } from "../../src/db/Database"
import { testConfig } from "../support/TestApp"

/**
 * `DATABASE_LOCK_TIMEOUT_MS` and `DATABASE_STATEMENT_TIMEOUT_MS` are session
 * settings every connection of the write and read pools opens with. They
 * must reach PostgreSQL: @effect/sql-pg 4 ignores settings put in the URL,
 * silently, so each is read back here with `SHOW`.
 */
const Setting = Schema.Array(Schema.Struct({ value: Schema.String }))

const show = (sql: SqlClient.SqlClient, name: "lock_timeout" | "statement_timeout" | "application_name") =>
  sql.unsafe(`SELECT current_setting('${name}') AS value`).pipe(
    Effect.flatMap(Schema.decodeUnknownEffect(Setting)),
    Effect.map((rows) => rows[0]?.value)
  )

const storage = StorageLive.pipe(
  Layer.provide(
    testConfig({
      databaseLockTimeout: Duration.millis(1_234),
      databaseStatementTimeout: Duration.millis(5_678),
      databaseApplicationName: "session-settings-test"
    })
  )
)

describe("session settings of the database pools", () => {
  it.live("lock_timeout, statement_timeout and application_name hold on the write and the read pool", () =>
    Effect.gen(function* () {
      const write = yield* SqlClient.SqlClient
      const read = yield* ReadSqlClient
      for (const [sql, pool] of [
        [write, "write"],
        [read, "read"]
      ] as const) {
        expect(yield* show(sql, "lock_timeout")).toBe("1234ms")
        expect(yield* show(sql, "statement_timeout")).toBe("5678ms")
        expect(yield* show(sql, "application_name")).toBe(`session-settings-test/${pool}`)
      }
    }).pipe(Effect.provide(storage))
  )
})
