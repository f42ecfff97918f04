import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { runDocExamples } from "../support/runDocExamples"
import { baseUrl, freshWorkspace, TestApp } from "../support/TestApp"

/**
 * The curl examples of docs/history.md (a record as it was, undo, restore),
 * run in order by bash and curl against the started service: every answer
 * must be the one the document shows.
 */
layer(TestApp, { excludeTestServices: true })("docs/history.md examples", (it) => {
  it.effect("every curl example answers as documented", () =>
    Effect.gen(function* () {
      const { checked } = yield* runDocExamples("docs/history.md", yield* baseUrl, yield* freshWorkspace)
      expect(checked).toBeGreaterThanOrEqual(11)
    })
  )
})
