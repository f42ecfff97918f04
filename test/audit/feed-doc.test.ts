import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { runDocExamples } from "../support/runDocExamples"
import { baseUrl, freshWorkspace, TestApp } from "../support/TestApp"

/**
 * The runnable example of docs/feed.md, run as one shell script by bash and
 * curl against the started service: every answer must be the one the
 * document shows (status and the body fragments it quotes).
 */

/** NDJSON lines are JSON as PostgreSQL prints it (a space after `:` and `,`): compared compacted. */
const compactJsonLines = (body: string) =>
  body
    .trimEnd()
    .split("\n")
    .map((line) => (line.startsWith("{") ? JSON.stringify(JSON.parse(line)) : line))
    .join("\n")

layer(TestApp, { excludeTestServices: true })("docs/feed.md example", (it) => {
  it.effect("every curl example answers as documented", () =>
    Effect.gen(function* () {
      const { checked, received } = yield* runDocExamples(
        "docs/feed.md",
        yield* baseUrl,
        yield* freshWorkspace,
        compactJsonLines
      )
      expect(checked).toBe(5)
      expect(received[3]?.headers.get("content-type")).toContain("application/x-ndjson")
      expect(received[3]?.body.trimEnd().split("\n")).toHaveLength(2)
    })
  )
})
