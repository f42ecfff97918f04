import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import type { Workspace } from "../../src/api/Workspace"
import { signedInMember } from "./api"
import { documentedAnswers, receivedAnswers, shellBlocks } from "./docExamples"

/** The origin the documents' examples name; replaced by the started service's. */
const documentedOrigin = "http://127.0.0.1:3000"

const run = promisify(execFile)

/** A fresh folder with `cookies.txt` (curl's Netscape format) holding the session cookie; removed with the scope. */
const signedInFolder = (cookie: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const dir = await mkdtemp(join(tmpdir(), "doc-examples-"))
      const [name, value] = cookie.split("=", 2)
      await writeFile(join(dir, "cookies.txt"), `127.0.0.1\tFALSE\t/\tFALSE\t0\t${name}\t${value}\n`)
      return dir
    }),
    (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
  )

/**
 * Runs the `sh` blocks of a document (a path under docs/), in order, as one
 * bash script with curl against the service at `base`, signed in as a new
 * admin of `workspace` through a `cookies.txt`; every `curl -i` answer must
 * be the one its `# HTTP/1.1 ...` comment shows (status, ETag, replay mark,
 * body fragments, looked for in `normaliseBody` of the body). Gives how many
 * answers were checked and the answers themselves.
 */
export const runDocExamples = (
  document: string,
  base: string,
  workspace: Workspace,
  normaliseBody: (body: string) => string = (body) => body
) =>
  Effect.gen(function* () {
    const { cookie } = yield* signedInMember(base, workspace)
    const dir = yield* signedInFolder(cookie)
    const markdown = yield* Effect.promise(() => readFile(new URL(`../../${document}`, import.meta.url), "utf8"))
    const script = shellBlocks(markdown).join("\n")
    const expected = documentedAnswers(script)
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
      const body = normaliseBody(answer?.body ?? "")
      for (const fragment of documented.fragments) expect(body, documented.comment).toContain(fragment)
    })
    return { checked: expected.length, received }
  })
