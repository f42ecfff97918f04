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
 * The curl examples of docs/writes.md (idempotent retries, versions and
 * conflicts, collection entry ids), run in order as one shell script by
 * bash and curl against the started service, signed in through a
 * `cookies.txt` as the README's sign-in leaves it. Every answer must be the
 * one the document shows: its status, its ETag, its replay mark and the
 * body fragments it quotes.
 */

const documentedOrigin = "http://127.0.0.1:3000"

const run = promisify(execFile)

/** A fresh folder with `cookies.txt` (curl's Netscape format) holding the session cookie; removed with the scope. */
const signedInFolder = (cookie: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const dir = await mkdtemp(join(tmpdir(), "writes-doc-"))
      const [name, value] = cookie.split("=", 2)
      await writeFile(join(dir, "cookies.txt"), `127.0.0.1\tFALSE\t/\tFALSE\t0\t${name}\t${value}\n`)
      return dir
    }),
    (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
  )

layer(TestApp, { excludeTestServices: true })("docs/writes.md examples", (it) => {
  it.scoped("every curl example answers as documented", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const { cookie } = yield* signedInMember(base, workspace)
      const dir = yield* signedInFolder(cookie)
      const markdown = yield* Effect.promise(() => readFile(new URL("../../docs/writes.md", import.meta.url), "utf8"))
      const script = shellBlocks(markdown).join("\n")
      const expected = documentedAnswers(script)
      expect(expected.length).toBeGreaterThanOrEqual(15)

      const { stdout } = yield* Effect.promise(() =>
        run("bash", ["-c", `set -euo pipefail\n${script.replaceAll(documentedOrigin, base)}`], {
          cwd: dir,
          timeout: 60_000,
          maxBuffer: 16 * 1024 * 1024
        })
      )
      const received = receivedAnswers(stdout)
      expect(received.map((answer) => answer.status)).toEqual(expected.map((answer) => answer.status))
      expected.forEach((documented, i) => {
        const answer = received[i]
        expect(answer?.headers.get("etag"), documented.comment).toBe(documented.etag ?? answer?.headers.get("etag"))
        if (documented.replayed) expect(answer?.headers.get("idempotency-replayed"), documented.comment).toBe("true")
        for (const fragment of documented.fragments) expect(answer?.body, documented.comment).toContain(fragment)
      })
    })
  )
})
