import { Effect, Layer, Option, Redacted } from "effect"
import { timingSafeEqual } from "node:crypto"
import { AppConfig } from "../config/AppConfig"
import { Unauthorized } from "../api/errors"
import { EngineAuthenticated } from "../api/EngineAuth"

const sameToken = (a: string, b: string) => {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}

export const EngineAuthenticatedLive = Layer.effect(
  EngineAuthenticated,
  Effect.gen(function* () {
    const config = yield* AppConfig
    return EngineAuthenticated.of({
      engine: (httpEffect, { credential }) =>
        Option.match(config.engineToken, {
          onNone: () => Effect.fail(new Unauthorized({ message: "the engine route is off: ENGINE_TOKEN is not set" })),
          onSome: (expected) =>
            sameToken(Redacted.value(credential), Redacted.value(expected))
              ? httpEffect
              : Effect.fail(
                  new Unauthorized({ message: "the engine route accepts only the workflow engine's credential" })
                )
        })
    })
  })
)
