import { Effect, Exit, Option, Redacted } from "effect"
import { runCli, runUserCreate } from "../../support/cli"
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
    const succeeded =
      (command: string) =>
      ({ exit, stderr, stdout }: Effect.Success<ReturnType<typeof runCli>>) =>
        Exit.isSuccess(exit)
          ? Effect.succeed(stdout)
          : Effect.fail(new Error(`admin ${command} failed: ${stderr.join(" ")} ${String(exit.cause)}`))
    const cli = (...args: ReadonlyArray<string>) => Effect.flatMap(runCli(...args), succeeded(args.join(" ")))
    return yield* Effect.gen(function* () {
      yield* cli("workspace", "create", tenant.workspace)
      yield* Effect.flatMap(
        runUserCreate(tenant.password, "--email", tenant.email, "--name", "Fault Admin"),
        succeeded("user create")
      )
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
