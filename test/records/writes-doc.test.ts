import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { runDocExamples } from "../support/runDocExamples"
import { baseUrl, freshWorkspace, TestApp } from "../support/TestApp"

/**
 * The curl examples of docs/writes.md (idempotent retries, versions and
 * conflicts, collection entry ids), run in order as one shell script by
 * bash and curl against the started service: every answer must be the one
 * the document shows (status, ETag, replay mark, body fragments).
 */
layer(TestApp, { excludeTestServices: true })("docs/writes.md examples", (it) => {
  it.effect("every curl example answers as documented", () =>
    Effect.gen(function* () {
      const { checked } = yield* runDocExamples("docs/writes.md", yield* baseUrl, yield* freshWorkspace)
      expect(checked).toBeGreaterThanOrEqual(15)
    })
  )
})
