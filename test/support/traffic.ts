import { Effect, Fiber, Ref } from "effect"
import type { Scope } from "effect"
import { eventually } from "../broadcast/streamHelpers"
import type { Client } from "./api"
import type { TestResponse } from "./http"

/** One answer a loop got: which step asked, its status, `Retry-After` and body. */
export interface Answered {
  readonly step: string
  readonly status: number
  readonly retryAfter: string | null
  readonly body: unknown
}

/** One request of a loop: its name and how it is sent, given the record its last creating step made (if it did). */
export interface Step {
  readonly name: string
  /** Its answer is a record the steps after it work on. */
  readonly creates?: true
  readonly send: (client: Client, last: string | undefined) => Effect.Effect<TestResponse>
}

export interface Traffic {
  /** Every answer so far, in order. */
  readonly answers: Effect.Effect<ReadonlyArray<Answered>>
  /** Waits until the loop has had `more` answers beyond those it had when called. */
  readonly further: (more: number) => Effect.Effect<void>
  /** Ends the loop after its request in flight and waits for it. */
  readonly stop: Effect.Effect<void>
}

const idOf = (body: unknown): string | undefined =>
  typeof body === "object" && body !== null && "id" in body && typeof body.id === "string" ? body.id : undefined

/**
 * Sends `steps` one after the other, over and over, as `client`, until
 * stopped (or the scope closes): a caller that keeps working while something
 * happens to its workspace. A creating step hands its record's id to the
 * steps after it (none when it was refused).
 */
export const trafficOf = (client: Client, steps: ReadonlyArray<Step>): Effect.Effect<Traffic, never, Scope.Scope> =>
  Effect.gen(function* () {
    const answers = yield* Ref.make<ReadonlyArray<Answered>>([])
    let going = true
    let last: string | undefined
    const loop = Effect.gen(function* () {
      while (going) {
        for (const step of steps) {
          const response = yield* step.send(client, last)
          if (step.creates === true) last = idOf(response.body)
          const answer = {
            step: step.name,
            status: response.status,
            retryAfter: response.headers.get("retry-after"),
            body: response.body
          }
          yield* Ref.update(answers, (all) => [...all, answer])
        }
      }
    })
    const fiber = yield* Effect.forkScoped(loop)
    return {
      answers: Ref.get(answers),
      further: (more) =>
        Effect.flatMap(Ref.get(answers), (before) =>
          eventually(
            `${more} more answers`,
            Effect.map(Ref.get(answers), (now) => now.length >= before.length + more),
            "60 seconds"
          )
        ),
      stop: Effect.suspend(() => {
        going = false
        return Fiber.join(fiber)
      })
    }
  })
