import { SqlClient } from "effect/sql"
import { Effect, Layer, Option } from "effect"
import { queueName } from "../../../src/queue/DurableQueues"
import { Redis } from "ioredis"
import { queueTable } from "../../../src/tenancy/migrations/durableQueue"
import {
  freshUser,
  freshWorkspace,
  testPassword,
  testRedisUrl,
  testServices,
  uniqueSuffix
} from "../../support/TestApp"

/**
 * One deployment's shared names for a test run: its own Redis prefix and
 * queue prefix, so that nothing it publishes or enqueues meets another test's.
 */
export const deploymentNames = () => {
  const run = uniqueSuffix()
  return { run, redisPrefix: `abs:n-instances-${run}:`, queuePrefix: `n-instances-${run}` }
}

/**
 * A workspace with two admins, Alice and Bob, made in this process over the
 * database and Redis prefix the instances share. When the scope closes (after
 * the instances, which are started later), the workspace and users are
 * dropped, and the deployment's queue rows and Redis keys deleted.
 */
export const provisionDeployment = (names: ReturnType<typeof deploymentNames>) =>
  Effect.gen(function* () {
    const services = yield* Layer.build(
      testServices({ redisPrefix: Option.some(names.redisPrefix), queuePrefix: names.queuePrefix })
    )
    return yield* Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* Effect.addFinalizer(() =>
        Effect.gen(function* () {
          const queues = [queueName(names.queuePrefix, "jobs"), queueName(names.queuePrefix, "workflows")]
          yield* sql`DELETE FROM ${sql(queueTable)} WHERE queue_name IN ${sql.in(queues)}`
          yield* Effect.promise(async () => {
            const redis = new Redis(testRedisUrl)
            try {
              const keys = await redis.keys(`${names.redisPrefix}*`)
              if (keys.length > 0) await redis.del(...keys)
            } finally {
              redis.disconnect()
            }
          })
        }).pipe(Effect.orDie)
      )
      const workspace = yield* freshWorkspace
      const alice = yield* freshUser({ workspace, role: "admin" })
      const bob = yield* freshUser({ workspace, role: "admin" })
      const credentials = (email: string) => ({ workspace: workspace.slug, email, password: testPassword })
      return { workspace, alice, bob, aliceSignIn: credentials(alice.email), bobSignIn: credentials(bob.email) }
    }).pipe(Effect.provide(services))
  })
