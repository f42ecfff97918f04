import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Authentication } from "../../src/auth/Authentication"
import { Memberships } from "../../src/auth/Memberships"
import { Roles } from "../../src/auth/Roles"
import { Users } from "../../src/auth/Users"
import { platformSchema } from "../../src/tenancy/migrations/platform"
import { eventually } from "../broadcast/streamHelpers"
import { type ProcessArgs, processTree } from "../support/processTree"
import { meaningfulLines, runProcess, startProcess } from "../support/subprocess"
import { freshWorkspace, testDatabaseUrl, TestServices, uniqueSuffix } from "../support/TestApp"

/**
 * `admin user create` never takes the password as an argument, which every
 * user of the machine can read (`ps`, /proc/<pid>/cmdline) and the shell
 * keeps in its history: the compiled command line, as an operator runs it,
 * reads it from standard input or from a prompt that does not echo it.
 */

const env = { DATABASE_URL: testDatabaseUrl, REDIS_URL: undefined }

/** An email no one has used, whose user is deleted when the scope closes. */
const emailCleanedUp = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const email = `pw-${uniqueSuffix()}@example.com`
  yield* Effect.addFinalizer(() =>
    sql`DELETE FROM ${sql(`${platformSchema}.users`)} WHERE email = ${email}`.pipe(Effect.orDie)
  )
  return email
})

/** The user signs in with `password` once they are a member of a workspace. */
const signsIn = (email: string, password: string) =>
  Effect.gen(function* () {
    const user = yield* (yield* Users).getByEmail(email)
    const workspace = yield* freshWorkspace
    yield* (yield* Memberships).add(workspace.id, user.id)
    yield* (yield* Roles).assign(workspace, { kind: "user", id: user.id }, "admin")
    const { principal } = yield* (yield* Authentication).signIn({
      workspace: workspace.slug,
      email,
      password: Redacted.make(password)
    })
    expect(principal.id).toBe(user.id)
  })

const scratchDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "admin-password-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const created = (email: string) => new RegExp(`^user ${email.replace(/[.]/g, "\\.")} created \\(id [0-9a-f-]{36}\\)$`)

layer(Layer.provideMerge(Authentication.layer, TestServices), { excludeTestServices: true, timeout: 120_000 })(
  "admin user create: the password",
  (it) => {
    it.effect(
      "piped to `npm run admin`: the user is created and signs in with it; no process of the command line has it in its arguments",
      () =>
        Effect.gen(function* () {
          const email = yield* emailCleanedUp
          const password = `piped ${uniqueSuffix()} password`
          const cli = yield* startProcess(
            "npm",
            ["run", "--silent", "admin", "--", "user", "create", "--email", email, "--name", "Piped User"],
            env
          )
          // While it waits for the password on standard input: npm, and the compiled command line below it.
          let tree: ReadonlyArray<ProcessArgs> = []
          const isAdmin = (entry: ProcessArgs) => entry.argv.some((arg) => arg.endsWith("dist/server/admin.js"))
          yield* eventually(
            "the compiled command line runs",
            Effect.sync(() => {
              tree = processTree(cli.pid)
              return tree.some(isAdmin)
            }),
            "60 seconds"
          )
          expect(tree.find(isAdmin)?.argv.slice(-6)).toEqual([
            "user",
            "create",
            "--email",
            email,
            "--name",
            "Piped User"
          ])
          expect(tree.length).toBeGreaterThanOrEqual(2)
          for (const entry of tree) expect(entry.argv.join(" ")).not.toContain(password)

          yield* cli.write(`${password}\n`, true)
          const result = yield* cli.exited
          expect(result.code, result.stderr).toBe(0)
          expect(meaningfulLines(result.stdout)).toEqual([expect.stringMatching(created(email))])
          expect(result.stdout + result.stderr).not.toContain(password)
          yield* signsIn(email, password)
        }),
      120_000
    )

    it.effect(
      "typed at a terminal: asked for on standard error, not echoed; standard output holds only the answer; the user signs in with it",
      () =>
        Effect.gen(function* () {
          const email = yield* emailCleanedUp
          const password = `typed ${uniqueSuffix()} password`
          const out = join(yield* scratchDir, "out.txt")
          // `script` gives the command line a terminal (a pseudo-terminal) for its standard input and error, and
          // passes on what is written to it; standard output goes to a file, as in `admin ... > out.txt`.
          const terminal = yield* startProcess(
            "script",
            ["-qec", `node dist/server/admin.js user create --email ${email} --name Typed > ${out}`, "/dev/null"],
            env
          )
          // Typed only once asked: the prompt has turned echo off by then.
          yield* eventually(
            "the prompt",
            Effect.map(terminal.output, (text) => text.includes("password (not shown as you type)")),
            "60 seconds"
          )
          yield* terminal.write(`${password}\r`)
          const result = yield* terminal.exited
          expect(result.code, result.stdout).toBe(0)
          expect(result.stdout).not.toContain(password)
          expect(meaningfulLines(readFileSync(out, "utf8"))).toEqual([expect.stringMatching(created(email))])
          yield* signsIn(email, password)
        }),
      120_000
    )

    it.effect("--password is refused, saying how to give it, without printing it back; nothing is created", () =>
      Effect.gen(function* () {
        const email = yield* emailCleanedUp
        const password = `flagged ${uniqueSuffix()} password`
        const result = yield* runProcess(
          "node",
          ["dist/server/admin.js", "user", "create", "--email", email, "--name", "Flagged", "--password", password],
          env
        )
        expect(result.code).toBe(1)
        expect(meaningfulLines(result.stdout)).toEqual([])
        const lines = meaningfulLines(result.stderr)
        expect(lines).toHaveLength(1)
        expect(lines[0]).toMatch(/^--password is no longer accepted .*: type the password when asked, or pipe it /)
        expect(result.stderr).not.toContain(password)
        expect(yield* (yield* Users).findByEmail(email)).toEqual(Option.none())
      })
    )

    it.effect("nothing on standard input: one error line saying how to give the password; nothing is created", () =>
      Effect.gen(function* () {
        const email = yield* emailCleanedUp
        const result = yield* runProcess(
          "node",
          ["dist/server/admin.js", "user", "create", "--email", email, "--name", "Nobody"],
          env,
          process.cwd(),
          ""
        )
        expect(result.code).toBe(1)
        expect(meaningfulLines(result.stderr)).toEqual([
          `error: no password on standard input: pipe it as the first line (printf '%s\\n' "$SECRET" | ...), or run the command on a terminal to type it`
        ])
        expect(yield* (yield* Users).findByEmail(email)).toEqual(Option.none())
      })
    )
  }
)
