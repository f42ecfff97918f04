import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Option, Redacted, Result } from "effect"
import { AppConfig } from "../../src/config/AppConfig"
import { configErrorLines } from "../../src/config/configErrorLines"

const read = (env: Record<string, string>) =>
  Effect.runSync(
    Effect.result(Effect.provide(AppConfig, AppConfig.layer)).pipe(
      Effect.provideService(
        ConfigProvider.ConfigProvider,
        ConfigProvider.fromEnvRecord(env, { preserveEmptyStrings: true })
      )
    )
  )

const errorLines = (env: Record<string, string>) => {
  const result = read(env)
  return Result.isFailure(result) ? configErrorLines(result.failure) : []
}

const primary = "postgres://app@primary:5432/app"
const replica = "postgres://app:secret@replica:5432/app"

describe("DATABASE_READ_URL", () => {
  it("is the replica's URL beside DATABASE_URL; unset, there is no replica", () => {
    const readUrl = (env: Record<string, string>) =>
      Result.map(read(env), (config) => Option.map(config.databaseReadUrl, Redacted.value))
    expect(readUrl({ DATABASE_URL: primary, DATABASE_READ_URL: replica })).toEqual(Result.succeed(Option.some(replica)))
    expect(readUrl({ DATABASE_URL: primary })).toEqual(Result.succeed(Option.none()))
  })

  it("refuses a URL that is not postgres://, without printing it", () => {
    const lines = errorLines({ DATABASE_URL: primary, DATABASE_READ_URL: "mysql://app:secret@replica/app" })
    expect(lines).toEqual([
      "DATABASE_READ_URL: must be a postgres:// or postgresql:// URL, e.g. postgres://user:pass@replica:5432/db"
    ])
  })

  it("without DATABASE_URL (the embedded PGlite, which has no replica) is a start-up error", () => {
    expect(errorLines({ DATABASE_READ_URL: replica, PORT: "abc" })).toEqual([
      "DATABASE_READ_URL is set without DATABASE_URL: the embedded database (PGlite) has no replica; set DATABASE_URL to the primary, or unset DATABASE_READ_URL",
      'PORT: Expected a network port value but received "abc"'
    ])
  })
})
