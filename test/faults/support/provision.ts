import { Effect, Exit, Option, Redacted } from "effect"
import { runCli } from "../../support/cli"
import { testServices } from "../../support/TestApp"

export interface Tenant {
  readonly workspace: string
  readonly email: string
  readonly password: string
  readonly apiKey: string
}

/**
 * A workspace, an admin user and an admin API key, made with the admin CLI
 * in this process over the same PostgreSQL (and Redis) the service uses. The
 * services are released before this returns, so no connection of the test
 * is left to be cut by a fault.
 */
export const provisionTenant = (databaseUrl: string, redisUrl: string) =>
  Effect.gen(function* () {
    const tenant = { workspace: "faults", email: "admin@faults.test", password: "fault-suite-password" }
    const cli = (...args: ReadonlyArray<string>) =>
      Effect.flatMap(runCli(...args), ({ exit, stderr, stdout }) =>
        Exit.isSuccess(exit)
          ? Effect.succeed(stdout)
          : Effect.fail(new Error(`admin ${args.join(" ")} failed: ${stderr.join(" ")} ${String(exit.cause)}`))
      )
    return yield* Effect.gen(function* () {
      yield* cli("workspace", "create", tenant.workspace)
      yield* cli("user", "create", "--email", tenant.email, "--name", "Fault Admin", "--password", tenant.password)
      yield* cli("member", "add", "--workspace", tenant.workspace, "--email", tenant.email, "--role", "admin")
      const printed = yield* cli(
        "apikey",
        "create",
        "--workspace",
        tenant.workspace,
        "--name",
        "fault-writers",
        "--role",
        "admin"
      )
      const apiKey = printed.map((line) => line.trim()).find((line) => line.startsWith("ak_"))
      if (apiKey === undefined) return yield* Effect.fail(new Error(`no API key printed: ${printed.join(" | ")}`))
      return { ...tenant, apiKey } satisfies Tenant
    }).pipe(
      Effect.provide(
        testServices({
          databaseUrl: Option.some(Redacted.make(databaseUrl)),
          redisUrl: Option.some(Redacted.make(redisUrl))
        })
      )
    )
  })
