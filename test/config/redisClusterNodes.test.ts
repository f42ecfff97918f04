import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Option, Result } from "effect"
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

describe("REDIS_CLUSTER_NODES", () => {
  it("is a list of host:port (IPv6 in brackets); unset, there is no cluster", () => {
    const nodesOf = (env: Record<string, string>) => Result.map(read(env), (config) => config.redisClusterNodes)
    expect(nodesOf({ REDIS_CLUSTER_NODES: "10.0.0.1:7000, redis-b.internal:7001,[::1]:7002" })).toEqual(
      Result.succeed(
        Option.some([
          { host: "10.0.0.1", port: 7000 },
          { host: "redis-b.internal", port: 7001 },
          { host: "::1", port: 7002 }
        ])
      )
    )
    expect(nodesOf({})).toEqual(Result.succeed(Option.none()))
  })

  it("refuses a malformed list, naming the variable and the form", () => {
    for (const value of ["", "10.0.0.1", "10.0.0.1:0", "a:1,b", "redis://10.0.0.1:7000", "a:70000"])
      expect(errorLines({ REDIS_CLUSTER_NODES: value })).toEqual([
        `REDIS_CLUSTER_NODES: Expected a comma-separated list of host:port, e.g. 10.0.0.1:7000,10.0.0.2:7000 but received "${value}"`
      ])
  })

  it("together with REDIS_URL is a start-up error naming both", () => {
    expect(
      errorLines({ REDIS_CLUSTER_NODES: "10.0.0.1:7000", REDIS_URL: "redis://127.0.0.1:6379", PORT: "abc" })
    ).toEqual([
      "REDIS_URL and REDIS_CLUSTER_NODES are both set: set REDIS_URL for one Redis server, or REDIS_CLUSTER_NODES for a Redis Cluster, not both",
      'PORT: Expected a network port value but received "abc"'
    ])
  })
})
