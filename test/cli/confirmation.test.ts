import { describe, expect, it } from "@effect/vitest"
import { Console, Effect, Exit, Option, Schema, Terminal } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { AdminAnswer, AdminRequest } from "../../src/api/AdminSocket"
import type { Confirmation } from "../../src/app/admin/AdminInvocation"
import { AdminInvocation } from "../../src/app/admin/AdminInvocation"
import { confirm, confirms, decide } from "../../src/app/admin/confirmation"
import { answerConfirmed } from "../../src/cli/answerConfirmed"
import { askServer } from "../../src/cli/askServer"

const request = { question: "This drops workspace acme for good.", expected: "acme" }

/** A terminal whose user types `typed` (none: ends the input, as Ctrl-D does); how many lines were read. */
const typing = (typed: string | undefined) => {
  let reads = 0
  const terminal = Terminal.make({
    columns: Effect.succeed(80),
    rows: Effect.succeed(24),
    size: Effect.die("unused"),
    readInput: Effect.die("unused"),
    readLine: Effect.suspend(() => {
      reads++
      return typed === undefined ? Effect.fail(new Terminal.QuitError({})) : Effect.succeed(typed)
    }),
    display: () => Effect.void
  })
  return { terminal, reads: () => reads }
}

/** Runs `effect` as typed at `confirmation`, on `terminal`, with what it prints on standard error captured. */
const at = <A, E>(
  confirmation: Confirmation,
  terminal: Terminal.Terminal,
  effect: Effect.Effect<A, E, Terminal.Terminal>
) =>
  Effect.gen(function* () {
    const stderr: Array<string> = []
    const base = yield* Console.Console
    const exit = yield* effect.pipe(
      Effect.provideService(AdminInvocation, { cwd: process.cwd(), progress: false, confirmation }),
      Effect.provideService(Terminal.Terminal, terminal),
      Effect.provideService(Console.Console, { ...base, error: (...parts) => void stderr.push(parts.join(" ")) }),
      Effect.exit
    )
    return { exit, stderr }
  })

const failureOf = <A, E>(exit: Exit.Exit<A, E>) =>
  Exit.isFailure(exit) ? Option.getOrUndefined(Exit.findErrorOption(exit)) : undefined

describe("the go-ahead of a destructive command", () => {
  it("--yes goes ahead anywhere; otherwise a terminal asks, none refuses, the server has the command line ask", () => {
    const here: Confirmation = { _tag: "Terminal" }
    const none: Confirmation = { _tag: "None" }
    const unconfirmed: Confirmation = { _tag: "CommandLine", confirmed: undefined }
    for (const confirmation of [here, none, unconfirmed]) expect(decide(confirmation, true, "acme")).toBe("go")
    expect(decide(here, false, "acme")).toBe("ask")
    expect(decide(none, false, "acme")).toBe("refuse")
    expect(decide(unconfirmed, false, "acme")).toBe("ask-command-line")
    expect(decide({ _tag: "CommandLine", confirmed: "acme" }, false, "acme")).toBe("go")
    expect(decide({ _tag: "CommandLine", confirmed: "other" }, false, "acme")).toBe("ask-command-line")
  })

  it("only the exact name confirms, blanks around it aside", () => {
    expect(confirms("acme", "acme")).toBe(true)
    expect(confirms("  acme \n", "acme")).toBe(true)
    for (const typed of ["", "y", "yes", "ACME", "acm", "acme2", "ac me"]) expect(confirms(typed, "acme")).toBe(false)
  })

  it.effect(
    "on a terminal: the question on standard error, then the name typed goes ahead; anything else does not",
    () =>
      Effect.gen(function* () {
        const right = typing("acme")
        const asked = yield* at({ _tag: "Terminal" }, right.terminal, confirm(request, false))
        expect(Exit.isSuccess(asked.exit)).toBe(true)
        expect(asked.stderr).toEqual([`${request.question}\nType acme to confirm:`])
        expect(right.reads()).toBe(1)

        for (const typed of ["yes", undefined]) {
          const refused = yield* at({ _tag: "Terminal" }, typing(typed).terminal, confirm(request, false))
          expect(failureOf(refused.exit)).toMatchObject({
            _tag: "BadRequest",
            message: `not confirmed (typed "${typed ?? ""}"): nothing was done`
          })
        }

        const unasked = typing("acme")
        const yes = yield* at({ _tag: "Terminal" }, unasked.terminal, confirm(request, true))
        expect(Exit.isSuccess(yes.exit)).toBe(true)
        expect(unasked.reads()).toBe(0)
        expect(yes.stderr).toEqual([])
      })
  )

  it.effect("without a terminal and without --yes: refused, saying how to go ahead, nothing read", () =>
    Effect.gen(function* () {
      const nobody = typing("acme")
      const refused = yield* at({ _tag: "None" }, nobody.terminal, confirm(request, false))
      expect(failureOf(refused.exit)).toMatchObject({
        _tag: "BadRequest",
        message:
          'refusing to go ahead unconfirmed: there is no terminal to type "acme" on; pass --yes to go ahead without asking'
      })
      expect(nobody.reads()).toBe(0)
    })
  )

  it.effect("in the server: unconfirmed, the command line is to ask; confirmed with the name, it goes ahead", () =>
    Effect.gen(function* () {
      const server = typing("acme")
      const needed = yield* at({ _tag: "CommandLine", confirmed: undefined }, server.terminal, confirm(request, false))
      expect(failureOf(needed.exit)).toMatchObject({ _tag: "ConfirmationNeeded", ...request })
      const confirmed = yield* at({ _tag: "CommandLine", confirmed: "acme" }, server.terminal, confirm(request, false))
      expect(Exit.isSuccess(confirmed.exit)).toBe(true)
      // The server never reads a terminal.
      expect(server.reads()).toBe(0)
    })
  )
})

const decodeRequest = Schema.decodeUnknownSync(Schema.fromJsonString(AdminRequest))
const encodeAnswer = Schema.encodeSync(Schema.fromJsonString(AdminAnswer))

/**
 * An embedded server's admin socket that wants `expected` confirmed: it
 * answers `NeedsConfirmation` until a request carries it. Every request it
 * got, in order.
 */
const serverWanting = (expected: string) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly path: string; readonly received: Array<AdminRequest>; readonly close: () => void }>(
      (resume) => {
        const dir = mkdtempSync(join(tmpdir(), "confirm-socket-"))
        const path = join(dir, "admin.sock")
        const received: Array<AdminRequest> = []
        const server = createServer((socket) => {
          socket.setEncoding("utf8")
          let line = ""
          socket.on("data", (chunk: string) => {
            line += chunk
            if (!line.includes("\n")) return
            const request = decodeRequest(line.split("\n")[0] ?? "")
            received.push(request)
            const answer: AdminAnswer =
              request.confirmed === expected
                ? { _tag: "Ran", output: [{ stream: "stdout", text: `${expected} dropped` }], exitCode: 0 }
                : { _tag: "NeedsConfirmation", question: "Drop it?", expected }
            socket.end(`${encodeAnswer(answer)}\n`)
          })
        })
        server.listen(path, () =>
          resume(
            Effect.succeed({
              path,
              received,
              close: () => {
                server.close()
                rmSync(dir, { recursive: true, force: true })
              }
            })
          )
        )
      }
    ),
    (server) => Effect.sync(server.close)
  )

describe("a destructive command sent to the embedded server", () => {
  const args = ["workspace", "drop", "acme"]

  it.live("is confirmed on the command line's terminal, then sent again with what was typed", () =>
    Effect.gen(function* () {
      const server = yield* serverWanting("acme")
      const person = typing("acme")
      const first = yield* at(
        { _tag: "Terminal" },
        person.terminal,
        Effect.flatMap(Effect.orDie(Effect.map(askServer(server.path, args), Option.getOrThrow)), (answer) =>
          answerConfirmed(server.path, args, answer)
        )
      )
      expect(first.exit).toEqual(
        Exit.succeed(Option.some({ _tag: "Ran", output: [{ stream: "stdout", text: "acme dropped" }], exitCode: 0 }))
      )
      expect(first.stderr).toEqual(["Drop it?\nType acme to confirm:"])
      expect(server.received.map((request) => request.confirmed)).toEqual([undefined, "acme"])
      expect(server.received.every((request) => request.args.join(" ") === args.join(" "))).toBe(true)
    })
  )

  it.live("is refused on the command line without a terminal, and not sent again", () =>
    Effect.gen(function* () {
      const server = yield* serverWanting("acme")
      const nobody = typing("acme")
      const refused = yield* at(
        { _tag: "None" },
        nobody.terminal,
        Effect.flatMap(Effect.orDie(Effect.map(askServer(server.path, args), Option.getOrThrow)), (answer) =>
          answerConfirmed(server.path, args, answer)
        )
      )
      expect(failureOf(refused.exit)).toMatchObject({ _tag: "BadRequest", message: expect.stringMatching(/--yes/) })
      expect(server.received).toHaveLength(1)
      expect(nobody.reads()).toBe(0)
    })
  )
})
