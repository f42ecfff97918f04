import { describe, expect, it, layer } from "@effect/vitest"
import { Context, Deferred, Duration, Effect, Exit, Fiber, Layer, Option, Scope } from "effect"
import type { Command } from "effect/cli"
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { maxAdminRequestBytes } from "../../src/api/AdminSocket"
import { adminCommand } from "../../src/app/admin/commands"
import { demo } from "../../src/app/Provisioning"
import { askServer } from "../../src/cli/askServer"
import { Readiness } from "../../src/health/Readiness"
import { GracefulShutdown } from "../../src/shutdown/GracefulShutdown"
import { ended, eventually, opened } from "../broadcast/streamHelpers"
import { bearerClient, clientFor, createRecord, healthOf } from "../support/api"
import { signIn } from "../support/http"
import { login } from "../support/login"
import { startService } from "../support/service"
import type { RunningService } from "../support/service"
import { rowOf as listingRow } from "../support/listing"
import { openSse } from "../support/sse"
import type { SseStream } from "../support/sse"
import { meaningfulLines, runProcess } from "../support/subprocess"
import { testApp, uniqueSuffix } from "../support/TestApp"

/**
 * The admin command line against the embedded database while the embedded
 * server runs: one compiled server (`dist/server/main.js`, no DATABASE_URL)
 * for the whole file, and the compiled command line (`dist/server/admin.js`)
 * as separate processes, as an operator runs them.
 */

/** Every runnable command of the tree, as typed (`"member set-role"`): a new command must be run below. */
const commandsOf = (command: Command.Command.Any, prefix: ReadonlyArray<string> = []): Array<string> => {
  const path = [...prefix, command.name]
  const children = command.subcommands.flatMap((group) => group.commands)
  return children.length === 0 ? [path.join(" ")] : children.flatMap((child) => commandsOf(child, path))
}

/** The command a command line names: its first two words before any option. */
const commandOf = (args: ReadonlyArray<string>) => {
  const words: Array<string> = []
  for (const arg of args) {
    if (arg.startsWith("-") || words.length === 2) break
    words.push(arg)
  }
  return words.join(" ")
}

class EmbeddedServer extends Context.Service<
  EmbeddedServer,
  { readonly service: RunningService; readonly dataDir: string }
>()("EmbeddedServer") {}

const embeddedEnv = (dataDir: string) => ({ DATABASE_URL: undefined, REDIS_URL: undefined, DATA_DIR: dataDir })

const freshDataDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "admin-socket-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const EmbeddedServerLive = Layer.effect(
  EmbeddedServer,
  Effect.gen(function* () {
    const dataDir = yield* freshDataDir
    const service = yield* startService(embeddedEnv(dataDir), ["node", "dist/server/main.js"])
    yield* service.waitForLog("admin socket listening")
    return { service, dataDir }
  })
)

/** The compiled admin command line on `dataDir`, with no DATABASE_URL: the embedded database's; `input` its standard input. */
const adminIn = (dataDir: string) => (args: ReadonlyArray<string>, input?: string) =>
  runProcess("node", ["dist/server/admin.js", ...args], embeddedEnv(dataDir), process.cwd(), input)

/** One answer line for `request` (then the end of what the client sends) sent as it is on the admin socket at `path`, parsed. */
const rawAsk = (path: string, request: string | Buffer) =>
  Effect.promise(
    () =>
      new Promise<unknown>((resolve, reject) => {
        const socket = connect(path)
        let received = ""
        socket.setEncoding("utf8")
        socket.on("data", (chunk: string) => (received += chunk))
        socket.on("error", () => {})
        // Half-closed after the request, as a client that has nothing more to say.
        socket.on("connect", () => socket.end(request))
        socket.on("close", () => {
          try {
            resolve(JSON.parse(received.split("\n")[0] ?? ""))
          } catch (error) {
            reject(new Error(`no JSON answer: ${JSON.stringify(received)} (${String(error)})`))
          }
        })
      })
  )

const password = "socket password 123"

/** The row of a listing (its lines) whose first column is `first`. */
const rowOf = (lines: ReadonlyArray<string>, first: string) => listingRow(lines.join("\n"), 0, first)

layer(EmbeddedServerLive, { timeout: 180_000, excludeTestServices: true })(
  "admin command line while the embedded server runs",
  (it) => {
    it.effect(
      "every command runs in the server through its admin socket; their effects show over HTTP and on open streams",
      () =>
        Effect.gen(function* () {
          const { dataDir, service } = yield* EmbeddedServer
          const base = service.base
          const run = adminIn(dataDir)
          const ran = new Set<string>()
          /** Runs a command that must succeed, `input` piped to it; its stdout lines. */
          const piped = (input: string | undefined, ...args: ReadonlyArray<string>) =>
            Effect.gen(function* () {
              ran.add(commandOf(args))
              const result = yield* run(args, input)
              expect(result.code, `admin ${args.join(" ")}: ${result.stderr}`).toBe(0)
              expect(meaningfulLines(result.stderr)).toEqual([])
              return meaningfulLines(result.stdout)
            })

          /** Runs a command that must succeed; its stdout lines. */
          const admin = (...args: ReadonlyArray<string>) => piped(undefined, ...args)

          const slug = `sock-${uniqueSuffix()}`
          const ann = `ann-${uniqueSuffix()}@example.com`
          const bob = `bob-${uniqueSuffix()}@example.com`

          expect(yield* admin("workspace", "create", "--name", "Socket Co", slug)).toEqual([
            `workspace ${slug} created (schema ws_${slug.replace(/-/g, "_")}, role admin holds every grant)`,
            "seed data: crm 2 new records"
          ])
          expect(rowOf(yield* admin("workspace", "list"), slug)?.slice(0, 2)).toEqual([slug, "Socket Co"])
          expect(yield* admin("workspace", "seed", slug)).toEqual(["seed data: crm 0 new records"])

          // The password goes on standard input, and to the server inside the request: never in the arguments.
          expect(yield* piped(`${password}\n`, "user", "create", "--email", ann, "--name", "Ann")).toEqual([
            expect.stringMatching(new RegExp(`^user ${ann} created \\(id [0-9a-f-]+\\)$`))
          ])
          yield* piped(password, "user", "create", "--email", bob, "--name", "Bob")
          yield* admin("member", "add", "--workspace", slug, "--email", ann, "--role", "admin")
          // The workspace and its member, made through the server, sign in over its HTTP API.
          const annCookie = yield* signIn(base, { workspace: slug, email: ann, password })
          const me = yield* clientFor(base, annCookie).call((api) => api.auth.me())
          expect(me.body).toMatchObject({ kind: "user", email: ann, workspace: { slug, name: "Socket Co" } })
          expect(rowOf(yield* admin("user", "list"), ann)?.slice(0, 3)).toEqual([ann, "Ann", slug])

          // A role, then Bob holding it, signed in with a stream open.
          expect(
            yield* admin(
              "role",
              "grant",
              "--workspace",
              slug,
              "--role",
              "sales",
              "--business-object",
              "crm/deal",
              "--permission",
              "read"
            )
          ).toEqual([`role sales in ${slug} may read crm/deal`])
          yield* admin("member", "add", "--workspace", slug, "--email", bob, "--role", "sales")
          const members = yield* admin("member", "list", "--workspace", slug)
          expect(rowOf(members, ann)?.slice(0, 3)).toEqual([ann, "Ann", "admin"])
          expect(rowOf(members, bob)?.slice(0, 3)).toEqual([bob, "Bob", "sales"])

          /** Bob signed in, with a broadcast stream open and past its first event. */
          const bobStreaming = Effect.gen(function* () {
            const cookie = yield* signIn(base, { workspace: slug, email: bob, password })
            const stream = yield* openSse(`${base}/api/broadcast`, { cookie })
            yield* stream.waitFor((events) => events.length >= 1)
            return { cookie, stream }
          })
          /** The server ended the stream, its last event `end` with `reason`: the server's own bus carried the command's revocation. */
          const endedWith = (stream: SseStream, reason: string) =>
            Effect.gen(function* () {
              yield* stream.ended
              expect(yield* stream.events).toEqual([opened, ended(reason)])
            })

          const first = yield* bobStreaming
          yield* admin(
            "role",
            "grant",
            "--workspace",
            slug,
            "--role",
            "sales",
            "--business-object",
            "crm/company",
            "--permission",
            "read"
          )
          yield* endedWith(first.stream, "role-changed")

          const second = yield* bobStreaming
          expect(yield* admin("member", "set-role", "--workspace", slug, "--email", bob, "--role", "admin")).toEqual([
            `${bob} holds role admin in ${slug} (and no other)`
          ])
          yield* endedWith(second.stream, "role-changed")

          const third = yield* bobStreaming
          expect(yield* admin("user", "sign-out", "--email", bob)).toEqual([
            `${bob} is signed out everywhere (3 sessions ended; open streams closed)`
          ])
          yield* endedWith(third.stream, "signed-out")
          expect((yield* clientFor(base, third.cookie).get("/api/auth/me")).status).toBe(401)

          const fourth = yield* bobStreaming
          yield* admin("member", "remove", "--workspace", slug, "--email", bob)
          yield* endedWith(fourth.stream, "membership-changed")
          expect((yield* login(base, { workspace: slug, email: bob, password })).status).toBe(401)

          // An API key: shown once, accepted over HTTP, listed without its secret, revoked.
          const created = yield* admin("apikey", "create", "--workspace", slug, "--name", "importer", "--role", "sales")
          const keyId = /^API key (\S+) \(importer\)/.exec(created[0] ?? "")?.[1] ?? ""
          const key = created[1] ?? ""
          expect((yield* bearerClient(base, key).get("/api/auth/me")).status).toBe(200)
          const keys = yield* admin("apikey", "list", "--workspace", slug)
          expect(rowOf(keys, keyId)?.slice(0, 4)).toEqual([keyId, "importer", "service account", "sales"])
          expect(keys.join("\n")).not.toContain(key)
          expect(yield* admin("apikey", "revoke", "--workspace", slug, "--id", keyId)).toEqual([
            `API key ${keyId} revoked`
          ])
          expect((yield* bearerClient(base, key).get("/api/auth/me")).status).toBe(401)
          expect(rowOf(yield* admin("apikey", "list", "--workspace", slug), keyId)?.[5]).toMatch(/^revoked /)

          // An agent and its key.
          const agent = yield* admin("agent", "create", "--workspace", slug, "--name", "Night shift", "--role", "sales")
          expect((yield* bearerClient(base, agent[1] ?? "").get("/api/auth/me")).status).toBe(200)
          expect(rowOf(yield* admin("agent", "list", "--workspace", slug), "Night shift")?.slice(0, 3)).toEqual([
            "Night shift",
            "sales",
            "1"
          ])

          expect(yield* admin("jobs", "failed")).toEqual(["no failed jobs or workflow runs"])
          // A command that fails in the server: its message on stderr and its exit code, as if run here.
          ran.add("jobs retry")
          const retry = yield* run(["jobs", "retry", "no-such-run"])
          expect(retry.code).toBe(1)
          expect(meaningfulLines(retry.stderr)).toEqual(["error: no failed job or workflow run no-such-run"])
          const unknown = yield* run(["member", "list", "--workspace", "no-such-workspace"])
          expect(unknown.code).toBe(1)
          expect(meaningfulLines(unknown.stderr)).toEqual(["error: unknown workspace: no-such-workspace"])

          // The export's file is named relative to where the command line was typed, not the server's directory.
          ran.add("feed export")
          const exported = yield* runProcess(
            "node",
            [resolve("dist/server/admin.js"), "feed", "export", "--workspace", slug, "feed.ndjson"],
            embeddedEnv(dataDir),
            dataDir
          )
          expect(exported.code, exported.stderr).toBe(0)
          const feedLines = readFileSync(join(dataDir, "feed.ndjson"), "utf8").trim().split("\n")
          expect(feedLines.length).toBeGreaterThan(0)
          expect(meaningfulLines(exported.stderr).join("\n")).toContain(`rows to ${join(dataDir, "feed.ndjson")}`)

          // An import: the file named relative to where the command line was typed; run again, nothing twice.
          ran.add("records import")
          writeFileSync(
            join(dataDir, "companies.ndjson"),
            `${JSON.stringify({ name: "Imported One" })}\n${JSON.stringify({ name: "Imported Two" })}\n`
          )
          const importArgs = ["records", "import", "--workspace", slug, "--business-object", "crm/company"]
          for (const [written, replayed] of [
            [2, 0],
            [0, 2]
          ]) {
            const imported = yield* runProcess(
              "node",
              [resolve("dist/server/admin.js"), ...importArgs, "companies.ndjson"],
              embeddedEnv(dataDir),
              dataDir
            )
            expect(imported.code, imported.stderr).toBe(0)
            expect(meaningfulLines(imported.stdout + imported.stderr).join("\n")).toContain(
              `${written} records written, ${replayed} already imported`
            )
          }

          // A digest, signed with the key the server makes in its data directory on first use (and says so),
          // appended to a file named relative to where the command line was typed.
          ran.add("audit digest")
          const digested = yield* runProcess(
            "node",
            [resolve("dist/server/admin.js"), "audit", "digest", "--workspace", slug, "--out", "acme.digests"],
            embeddedEnv(dataDir),
            dataDir
          )
          expect(digested.code, digested.stderr).toBe(0)
          const keyFile = join(dataDir, "ledger-signing-key.pem")
          const said = meaningfulLines(digested.stderr)
          expect(said[0]?.startsWith(`made a signing key in ${keyFile} (mode 0600`), said[0]).toBe(true)
          expect(said[1]).toMatch(/^digest of \S+ at position \d+ appended to /)
          expect(said[1]?.endsWith(` appended to ${join(dataDir, "acme.digests")}`), said[1]).toBe(true)
          expect(statSync(keyFile).mode & 0o777).toBe(0o600)
          expect(statSync(join(dataDir, "acme.digests")).mode & 0o777).toBe(0o600)
          expect(JSON.parse(readFileSync(join(dataDir, "acme.digests"), "utf8"))).toMatchObject({
            workspace: slug,
            signature: expect.any(String)
          })

          // An erasure, in the server's unit of work, as the operator.
          const erased = yield* createRecord(clientFor(base, annCookie), "crm/company", {
            name: "Erased Co",
            website: "https://erased.example"
          })
          expect(
            yield* admin(
              "audit",
              "erase",
              "--workspace",
              slug,
              "--record",
              `crm/company/${erased.id}`,
              "--field",
              "website"
            )
          ).toEqual([expect.stringMatching(/^erased website of crm\/company \S+: 2 values in 2 audit rows/)])

          // Verification in the server, against the digest taken before the erasure: it still holds. A digest line
          // changed after signing refuses the file: exit status 1 and the reason, forwarded.
          const digests = join(dataDir, "acme.digests")
          const verified = yield* admin("audit", "verify", "--workspace", slug, "--digest", digests)
          expect(verified.at(-1)).toBe("verified")
          expect(verified).toContainEqual(
            expect.stringMatching(/^ {2}position \d+: matches \(the digest on line 1 of /)
          )
          const changed = join(dataDir, "changed.digests")
          writeFileSync(changed, readFileSync(digests, "utf8").replace(/"position":"\d+"/, '"position":"1"'))
          const refused = yield* run(["audit", "verify", "--workspace", slug, "--digest", changed])
          expect(refused.code).toBe(1)
          expect(meaningfulLines(refused.stderr)).toEqual([
            `error: ${changed}, line 1: its signature does not match its content: the line was changed after it was signed`
          ])

          // A drop is confirmed on the command line's side: without a terminal and without --yes it is refused there.
          ran.add("workspace drop")
          const unconfirmed = yield* run(["workspace", "drop", slug])
          expect(unconfirmed.code).toBe(1)
          expect(meaningfulLines(unconfirmed.stderr)).toEqual([
            `error: refusing to go ahead unconfirmed: there is no terminal to type "${slug}" on; pass --yes to go ahead without asking`
          ])
          expect(rowOf(yield* admin("workspace", "list"), slug)?.[0]).toBe(slug)
          // With --yes: the feed exported first (to a file named from where the command was typed), then the drop,
          // whose end reaches the streams the server holds.
          const annStream = yield* openSse(`${base}/api/broadcast`, { cookie: annCookie })
          yield* annStream.waitFor((events) => events.length >= 1)
          const dropped = yield* runProcess(
            "node",
            [resolve("dist/server/admin.js"), "workspace", "drop", "--export", "left.ndjson", slug, "--yes"],
            embeddedEnv(dataDir),
            dataDir
          )
          expect(dropped.code, dropped.stderr).toBe(0)
          expect(meaningfulLines(dropped.stdout)).toEqual([
            `workspace ${slug} dropped (schema ws_${slug.replace(/-/g, "_")}; its queued work discarded, its sessions and streams ended)`
          ])
          expect(readFileSync(join(dataDir, "left.ndjson"), "utf8")).toContain(`"crm/deal"`)
          yield* endedWith(annStream, "workspace-removed")
          expect((yield* clientFor(base, annCookie).get("/api/auth/me")).status).toBe(401)
          expect(rowOf(yield* admin("workspace", "list"), slug)).toBeUndefined()

          expect([...ran].sort()).toEqual(
            commandsOf(adminCommand)
              .map((c) => c.replace(/^admin /, ""))
              .sort()
          )
          // Every one of them ran in the server (the data directory is its own), logged there by name only.
          const logged = (yield* service.logs).filter((line) => line.message === "admin command")
          expect(new Set(logged.map((line) => line.annotations.command))).toEqual(ran)
          expect(JSON.stringify(logged)).not.toContain(password)
        }),
      // Every command of the tree is one run of the compiled command line (a process start each): seconds apiece
      // on a loaded machine, so the default 30 s was a race with the machine's load (seen at load 8).
      180_000
    )

    it.effect("--help and --version need no server: no admin command reaches it", () =>
      Effect.gen(function* () {
        const { dataDir, service } = yield* EmbeddedServer
        const before = (yield* service.logs).filter((line) => line.message === "admin command").length
        const help = yield* adminIn(dataDir)(["member", "--help"])
        expect(help.code).toBe(0)
        expect(help.stdout).toContain("set-role --workspace text --email text --role text")
        const version = yield* adminIn(dataDir)(["--version"])
        expect(version.code).toBe(0)
        const after = (yield* service.logs).filter((line) => line.message === "admin command").length
        expect(after).toBe(before)
      })
    )

    it.effect("the socket is the server's user's only; a malformed or oversized request gets an error answer", () =>
      Effect.gen(function* () {
        const { dataDir, service } = yield* EmbeddedServer
        const path = join(dataDir, "admin.sock")
        const stat = statSync(path)
        expect(stat.isSocket()).toBe(true)
        expect(stat.mode & 0o777).toBe(0o600)

        expect(yield* rawAsk(path, "not json\n")).toEqual({
          _tag: "Refused",
          message: expect.stringMatching(/^malformed request: expected one JSON line/)
        })
        expect(yield* rawAsk(path, `${JSON.stringify({ args: "workspace list" })}\n`)).toEqual({
          _tag: "Refused",
          message: expect.stringMatching(/^malformed request: .* at args: /)
        })
        expect(yield* rawAsk(path, Buffer.alloc(maxAdminRequestBytes + 1, "a"))).toEqual({
          _tag: "Refused",
          message: `request line longer than ${maxAdminRequestBytes} bytes`
        })
        expect(yield* rawAsk(path, `{"args": ["workspace", "list"]}`)).toEqual({
          _tag: "Refused",
          message: "the connection ended before a complete request line"
        })

        // The server goes on: HTTP and the socket answer.
        expect((yield* healthOf(service.base).live).status).toBe(200)
        expect(yield* rawAsk(path, `${JSON.stringify({ args: ["workspace", "list"] })}\n`)).toMatchObject({
          _tag: "Ran",
          exitCode: 0,
          output: [{ stream: "stdout", text: expect.stringContaining(demo.workspace) }]
        })
      })
    )

    it.effect(
      "once the server has stopped, the socket is gone and the command line opens the data directory itself",
      () =>
        Effect.gen(function* () {
          const { dataDir, service } = yield* EmbeddedServer
          yield* service.signal("SIGTERM")
          expect((yield* service.exited).code).toBe(0)
          expect(existsSync(join(dataDir, "admin.sock"))).toBe(false)
          expect(existsSync(join(dataDir, "service.lock"))).toBe(false)
          const list = yield* adminIn(dataDir)(["workspace", "list"])
          expect(list.code, list.stderr).toBe(0)
          expect(rowOf(meaningfulLines(list.stdout), demo.workspace)?.[0]).toBe(demo.workspace)
        })
    )
  }
)

describe("admin command line and an embedded server without an admin socket", () => {
  it.live("a live process holding the data directory, no socket: the command refuses, naming it", () =>
    Effect.gen(function* () {
      const dataDir = yield* freshDataDir
      // This test's own process holds it, as an older server would: alive, and no socket.
      writeFileSync(join(dataDir, "service.lock"), String(process.pid))
      const result = yield* adminIn(dataDir)(["workspace", "list"])
      expect(result.code).toBe(1)
      expect(meaningfulLines(result.stderr)).toEqual([
        `error: the embedded database in ${dataDir} is in use by process ${process.pid}: stop it, or set DATABASE_URL`
      ])
    })
  )
})

describe("admin socket while the embedded server drains", () => {
  it.live(
    "a request during the drain is refused, saying why; the socket goes with the server",
    () =>
      Effect.gen(function* () {
        const dataDir = yield* freshDataDir
        const appScope = yield* Scope.make()
        yield* Effect.addFinalizer(() => Scope.close(appScope, Exit.void))
        const app = yield* Layer.buildWithScope(
          testApp({ databaseUrl: Option.none(), redisUrl: Option.none(), dataDir, drainTimeout: Duration.seconds(30) }),
          appScope
        )
        const path = join(dataDir, "admin.sock")
        const ask = askServer(path, ["workspace", "list"])
        expect(yield* ask).toMatchObject(Option.some({ _tag: "Ran", exitCode: 0 }))

        // A part of the app with work to finish holds the drain open until released.
        const release = yield* Deferred.make<void>()
        yield* Effect.flatMap(GracefulShutdown, (shutdown) => shutdown.onDrain("test", Deferred.await(release))).pipe(
          Effect.provide(app)
        )
        const closing = yield* Effect.forkChild(Scope.close(appScope, Exit.void))
        yield* eventually("the app drains", Effect.flatMap(Readiness, (r) => r.isDraining).pipe(Effect.provide(app)))
        expect(yield* ask).toEqual(
          Option.some({
            _tag: "Refused",
            message:
              "the server is shutting down: run the command again once it has stopped (the command line then opens the data directory itself)"
          })
        )
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(closing)
        expect(existsSync(path)).toBe(false)
        expect(yield* ask).toEqual(Option.none())
      }),
    120_000
  )
})
