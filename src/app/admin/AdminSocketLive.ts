import { NodeServices } from "@effect/platform-node"
import { Effect, FiberSet, Layer, Result, Schema, SchemaIssue, Semaphore } from "effect"
import { chmodSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import type { Server, Socket } from "node:net"
import { AdminAnswer, AdminRefused, AdminRequest, maxAdminRequestBytes } from "../../api/AdminSocket"
import { AppConfig } from "../../config/AppConfig"
import { DatabaseInfo } from "../../db/Database"
import { Readiness } from "../../health/Readiness"
import { GracefulShutdown } from "../../shutdown/GracefulShutdown"
import { adminSocketPath } from "./adminSocketPath"
import type { runCaptured as RunCaptured } from "./runCaptured"
import { fromJsonText } from "../../json/fromJsonText"

const decodeRequest = Schema.decodeUnknownResult(fromJsonText(AdminRequest))
const encodeAnswer = Schema.encodeSync(fromJsonText(AdminAnswer))
const issuesOf = SchemaIssue.makeFormatterStandardSchemaV1()

/** How long a connection may take to send its request line. */
const requestTimeoutMs = 10_000

const refused = (message: string) => AdminRefused.make({ message })

const draining = refused(
  "the server is shutting down: run the command again once it has stopped (the command line then opens the data directory itself)"
)

/** The command's name for the log: its first words before any option, never an option's value. */
const commandName = (args: ReadonlyArray<string>) => {
  const words: Array<string> = []
  for (const arg of args) {
    if (arg.startsWith("-") || words.length === 2) break
    words.push(arg)
  }
  return words.join(" ")
}

const malformed = (error: Schema.SchemaError) => {
  const [first] = issuesOf(error.issue).issues
  const where = first?.path === undefined || first.path.length === 0 ? "" : ` at ${first.path.map(String).join(".")}`
  return refused(
    `malformed request: expected one JSON line {"args": [string, ...]}${where}: ${first?.message ?? "unreadable"}`
  )
}

/**
 * Reads one request line from a connection (at most `maxAdminRequestBytes`,
 * within `requestTimeoutMs`) and hands it over, decoded, to `answer`, whose
 * answer it writes back before closing the connection. Whatever the client
 * sends, it gets one answer line and the connection ends; nothing throws.
 */
const serveConnection =
  (answer: (request: AdminRequest, reply: (answer: AdminAnswer) => void) => void) => (socket: Socket) => {
    // A client that went away: nothing to answer, nothing to report.
    socket.on("error", () => {})
    socket.setTimeout(requestTimeoutMs)
    const chunks: Array<Buffer> = []
    let size = 0
    let read = false
    const reply = (answer: AdminAnswer) => {
      if (socket.destroyed) return
      socket.end(`${encodeAnswer(answer)}\n`)
      // A client that keeps its end open (or goes on sending) after the answer is cut off in time.
      socket.setTimeout(requestTimeoutMs)
    }
    const refuse = (message: string) => {
      read = true
      reply(refused(message))
    }
    socket.on("timeout", () => {
      if (read) socket.destroy()
      else refuse(`no request line within ${requestTimeoutMs / 1000} s`)
    })
    socket.on("end", () => {
      if (!read) refuse("the connection ended before a complete request line")
    })
    socket.on("data", (chunk: Buffer) => {
      if (read) return
      const newline = chunk.indexOf(10)
      const part = newline === -1 ? chunk : chunk.subarray(0, newline)
      size += part.length
      if (size > maxAdminRequestBytes) return refuse(`request line longer than ${maxAdminRequestBytes} bytes`)
      chunks.push(part)
      if (newline === -1) return
      read = true
      socket.setTimeout(0)
      const decoded = decodeRequest(Buffer.concat(chunks).toString("utf8"))
      if (Result.isFailure(decoded)) return reply(malformed(decoded.failure))
      answer(decoded.success, reply)
    })
  }

/**
 * The command tree (effect/cli and every
 * command's code) is imported on the first command, not at start: only
 * embedded mode listens here, and a server of either mode would otherwise
 * hold it in memory for nothing.
 */
const runCaptured = (...args: Parameters<typeof RunCaptured>) =>
  Effect.promise(() => import("./runCaptured")).pipe(Effect.flatMap((module) => module.runCaptured(...args)))

const asError = (error: unknown) => (error instanceof Error ? error : new Error(String(error)))

/** Listens on `path`, created readable and writable by this OS user only (mode 0600), a stale socket file replaced. */
const listen = (server: Server, path: string) =>
  Effect.callback<void, Error>((resume) => {
    const unix = process.platform !== "win32"
    const onError = (error: Error) => resume(Effect.fail(error))
    server.once("error", onError)
    let previous: number | undefined
    try {
      // The lock on the data directory is this process's: a socket file there is a crashed server's.
      if (unix) rmSync(path, { force: true })
      // The mask holds while `listen` creates the socket file (synchronously): it is never open to others.
      if (unix) previous = process.umask(0o177)
      server.listen(path, () => {
        server.off("error", onError)
        try {
          if (unix) chmodSync(path, 0o600)
          resume(Effect.void)
        } catch (error) {
          server.close()
          resume(Effect.fail(asError(error)))
        }
      })
    } catch (error) {
      resume(Effect.fail(asError(error)))
    } finally {
      if (previous !== undefined) process.umask(previous)
    }
  })

/**
 * Embedded mode only: the admin socket (`adminSocketPath`), through which the
 * admin command line runs its commands in this process while the server
 * holds the data directory. Each connection carries one `AdminRequest` and
 * gets one `AdminAnswer`: the same effect/cli command tree the command line
 * runs, over this server's services (its broadcast bus ends the streams a
 * member command ends), its printing captured. Commands run one at a time,
 * in arrival order; HTTP requests go on meanwhile. Once the server drains,
 * new requests are refused and the drain waits for the running command.
 */
export const AdminSocketLive = Layer.effectDiscard(
  Effect.gen(function* () {
    if ((yield* DatabaseInfo).kind !== "embedded") return
    const path = adminSocketPath((yield* AppConfig).dataDir)
    const readiness = yield* Readiness
    const oneAtATime = yield* Semaphore.make(1)

    const run = ({ args, confirmed, cwd, secret }: AdminRequest) =>
      Effect.gen(function* () {
        if (args.includes("--wizard"))
          return refused("--wizard asks on a terminal, which the server has none of: give the command in full")
        if (yield* readiness.isDraining) return draining
        return yield* oneAtATime.withPermits(1)(
          Effect.gen(function* () {
            if (yield* readiness.isDraining) return draining
            const started = Date.now()
            const ran = yield* runCaptured(args, cwd, { secret, confirmed })
            yield* Effect.logInfo("admin command").pipe(
              Effect.annotateLogs({
                command: commandName(args),
                ...(ran._tag === "Ran" ? { exitCode: ran.exitCode } : { outcome: "needs confirmation" }),
                durationMs: Date.now() - started
              })
            )
            return ran
          })
        )
      })

    const runFork = yield* FiberSet.makeRuntime<Effect.Services<ReturnType<typeof run>>>()
    const sockets = new Set<Socket>()
    const server = createServer({ allowHalfOpen: true })
    server.maxConnections = 16
    server.on("connection", (socket: Socket) => {
      sockets.add(socket)
      socket.once("close", () => sockets.delete(socket))
    })
    server.on(
      "connection",
      serveConnection((request, reply) => {
        runFork(Effect.map(run(request), reply))
      })
    )
    const listening = yield* listen(server, path).pipe(Effect.result)
    if (Result.isFailure(listening)) {
      yield* Effect.logWarning(
        "admin socket: cannot listen; the admin command line refuses while this server runs"
      ).pipe(Effect.annotateLogs({ path, error: listening.failure.message }))
      return
    }
    yield* Effect.addFinalizer(() =>
      Effect.callback<void>((resume) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => {
          if (process.platform !== "win32") rmSync(path, { force: true })
          resume(Effect.void)
        })
      })
    )
    yield* (yield* GracefulShutdown).onDrain("admin socket", oneAtATime.withPermits(1)(Effect.void))
    yield* Effect.logInfo("admin socket listening").pipe(Effect.annotateLogs({ path }))
  })
).pipe(
  // What the command line needs (files, a terminal, standard streams): the command tree's environment.
  Layer.provide(NodeServices.layer)
)
