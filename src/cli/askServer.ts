import { Data, Effect, Option, Redacted, Result, Schema } from "effect"
import { connect } from "node:net"
import { AdminAnswer, AdminRequest } from "../api/AdminSocket"
import { fromJsonText } from "../json/fromJsonText"

export class AdminSocketError extends Data.TaggedError("AdminSocketError")<{ readonly message: string }> {}

const encodeRequest = Schema.encodeSync(fromJsonText(AdminRequest))
const decodeAnswer = Schema.decodeUnknownResult(fromJsonText(AdminAnswer))

/** How long the server may take to accept the connection (not to run the command: that takes what it takes). */
const connectTimeoutMs = 5_000

/** Errors of a connection attempt that mean no server listens there (a socket file left by one that crashed, or none). */
const nobodyListens = new Set(["ENOENT", "ECONNREFUSED"])

/** What goes with a command's arguments (`AdminRequest`'s fields of the same names). */
export interface SentWithCommand {
  /** What the command asks for (`user create`'s password), read on this side. */
  readonly secret?: Option.Option<Redacted.Redacted<string>>
  /** What was typed on this side's terminal to confirm a destructive command. */
  readonly confirmed?: string | undefined
}

/**
 * Sends `args` (as typed after `admin`) to the embedded server's admin
 * socket at `path`, with what the command line read on its side: the
 * `secret` the command asks for, if any, and what was typed to confirm a
 * destructive command, if anything (`confirmed`); returns the server's
 * answer; none when no server listens there. Fails when a server listens
 * but the exchange goes wrong (it stopped midway, or the socket is not this
 * user's to use).
 */
export const askServer = (
  path: string,
  args: ReadonlyArray<string>,
  sent: SentWithCommand = {}
): Effect.Effect<Option.Option<AdminAnswer>, AdminSocketError> =>
  Effect.callback<Option.Option<AdminAnswer>, AdminSocketError>((resume) => {
    const socket = connect(path)
    let connected = false
    let received = ""
    let settled = false
    const settle = (result: Effect.Effect<Option.Option<AdminAnswer>, AdminSocketError>) => {
      if (settled) return
      settled = true
      socket.destroy()
      resume(result)
    }
    const fail = (message: string) => settle(Effect.fail(new AdminSocketError({ message })))
    const timer = setTimeout(
      () => fail(`the server's admin socket ${path} did not accept the connection within ${connectTimeoutMs / 1000} s`),
      connectTimeoutMs
    )
    socket.setEncoding("utf8")
    socket.on("connect", () => {
      connected = true
      clearTimeout(timer)
      const request = {
        args,
        cwd: process.cwd(),
        secret: Option.getOrUndefined(Option.map(sent.secret ?? Option.none(), Redacted.value)),
        confirmed: sent.confirmed
      }
      socket.write(`${encodeRequest(request)}\n`)
    })
    socket.on("data", (chunk: string) => {
      received += chunk
      const newline = received.indexOf("\n")
      if (newline === -1) return
      const answer = decodeAnswer(received.slice(0, newline))
      if (Result.isFailure(answer))
        return fail("the server's admin socket sent an answer this command line cannot read")
      settle(Effect.succeed(Option.some(answer.success)))
    })
    socket.on("close", () => {
      clearTimeout(timer)
      fail("the server closed its admin socket without an answer (is it stopping?)")
    })
    socket.on("error", (error: NodeJS.ErrnoException) => {
      clearTimeout(timer)
      if (!connected && nobodyListens.has(error.code ?? "")) return settle(Effect.succeed(Option.none()))
      fail(`cannot use the server's admin socket ${path}: ${error.message}`)
    })
    return Effect.sync(() => {
      clearTimeout(timer)
      socket.destroy()
    })
  })
