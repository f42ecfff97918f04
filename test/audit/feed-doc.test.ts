import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { signedInMember } from "../support/api"
import { documentedAnswers, receivedAnswers, shellBlocks } from "../support/docExamples"
import { baseUrl, freshWorkspace, TestApp } from "../support/TestApp"

/**
 * The runnable example of docs/feed.md, run as one shell script by bash and
 * curl against the started service, signed in through a `cookies.txt` as
 * the README's sign-in leaves it: every answer must be the one the document
 * shows (status and the body fragments it quotes).
 */

const documentedOrigin = "http://127.0.0.1:3000"

const run = promisify(execFile)

const signedInFolder = (cookie: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const dir = await mkdtemp(join(tmpdir(), "feed-doc-"))
      const [name, value] = cookie.split("=", 2)
      await writeFile(join(dir, "cookies.txt"), `127.0.0.1\tFALSE\t/\tFALSE\t0\t${name}\t${value}\n`)
      return dir
    }),
    (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
  )

layer(TestApp, { excludeTestServices: true })("docs/feed.md example", (it) => {
  it.scoped("every curl example answers as documented", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const { cookie } = yield* signedInMember(base, workspace)
      const dir = yield* signedInFolder(cookie)
      const markdown = yield* Effect.promise(() => readFile(new URL("../../docs/feed.md", import.meta.url), "utf8"))
      const script = shellBlocks(markdown).join("\n")
      const expected = documentedAnswers(script)
      expect(expected.length).toBe(5)

      const { stdout } = yield* Effect.promise(() =>
        run("bash", ["-c", `set -euo pipefail\n${script.replaceAll(documentedOrigin, base)}`], {
          cwd: dir,
          timeout: 60_000
        })
      )
      const received = receivedAnswers(stdout)
      expect(received.map((answer) => answer.status)).toEqual(expected.map((answer) => answer.status))
      // NDJSON lines are JSON as PostgreSQL prints it (a space after `:` and `,`): compared compacted.
      const compact = (body: string | undefined) =>
        (body ?? "")
          .trimEnd()
          .split("\n")
          .map((line) => (line.startsWith("{") ? JSON.stringify(JSON.parse(line)) : line))
          .join("\n")
      expected.forEach((documented, i) => {
        const body = compact(received[i]?.body)
        for (const fragment of documented.fragments) expect(body, documented.comment).toContain(fragment)
      })
      expect(received[3]?.headers.get("content-type")).toContain("application/x-ndjson")
      expect(received[3]?.body.trimEnd().split("\n")).toHaveLength(2)
    })
  )
})
