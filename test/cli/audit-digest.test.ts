import { generateKeyPairSync } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { expect, layer } from "@effect/vitest"
import { Cause, Effect, Exit, Option, Predicate, Redacted } from "effect"
import { withActor } from "../../src/context/Frames"
import { readDigestFile } from "../../src/ledger/Digests"
import { readHead } from "../../src/ledger/LedgerRows"
import { Records } from "../../src/records/Records"
import { UnitOfWork } from "../../src/unitOfWork/UnitOfWork"
import { runCli } from "../support/cli"
import { freshWorkspace, TestServices, testServices } from "../support/TestApp"

const someone = { kind: "user", id: "u-cli-digest", name: "Digest", email: "cli-digest@example.com" } as const

const signer = generateKeyPairSync("ed25519")

const scratch = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "audit-digest-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

/** The message a failed command failed with. */
const failureMessage = (exit: Exit.Exit<void, unknown>) =>
  Exit.isFailure(exit)
    ? Option.match(Cause.findErrorOption(exit.cause), {
        onNone: () => "no error",
        onSome: (error) => (Predicate.hasProperty(error, "message") ? String(error.message) : String(error))
      })
    : "succeeded"

const writeRow = (name: string) =>
  Effect.gen(function* () {
    const workspace = yield* freshWorkspace
    yield* (yield* UnitOfWork).run(workspace, (yield* Records).create("crm/company", { name })).pipe(withActor(someone))
    return workspace
  })

layer(testServices({ ledgerSigningKey: Option.some(Redacted.make(signer.privateKey)) }), {
  excludeTestServices: true
})("admin audit digest", (it) => {
  it.effect("--out appends a signed digest of the head to a file (made 0600); without it the line is printed", () =>
    Effect.gen(function* () {
      const workspace = yield* writeRow("Digested")
      const dir = yield* scratch
      const file = join(dir, "acme.digests")
      const first = yield* runCli("audit", "digest", "--workspace", workspace.slug, "--out", file)
      expect(Exit.isSuccess(first.exit), JSON.stringify(first.stderr)).toBe(true)
      const head = yield* readHead(workspace)
      expect(first.stdout).toEqual([])
      expect(first.stderr).toEqual([`digest of ${workspace.slug} at position ${head.position} appended to ${file}`])
      expect(statSync(file).mode & 0o777).toBe(0o600)

      yield* (yield* UnitOfWork)
        .run(workspace, (yield* Records).create("crm/company", { name: "Later" }))
        .pipe(withActor(someone))
      const second = yield* runCli("audit", "digest", "--workspace", workspace.slug, "--out", file)
      expect(Exit.isSuccess(second.exit)).toBe(true)
      const claims = yield* readDigestFile(file, workspace, signer.publicKey)
      expect(claims.map((claim) => claim.position)).toEqual([BigInt(head.position), BigInt(head.position) + 1n])

      const printed = yield* runCli("audit", "digest", "--workspace", workspace.slug)
      expect(Exit.isSuccess(printed.exit)).toBe(true)
      expect(printed.stdout).toHaveLength(1)
      expect(JSON.parse(printed.stdout[0] ?? "")).toMatchObject({
        workspace: workspace.slug,
        position: (yield* readHead(workspace)).position,
        signature: expect.any(String)
      })
      expect(readFileSync(file, "utf8").trimEnd().split("\n")).toHaveLength(2)
    })
  )

  it.effect("an unknown workspace or an unwritable file: one error line, nothing written", () =>
    Effect.gen(function* () {
      const dir = yield* scratch
      const unknown = yield* runCli("audit", "digest", "--workspace", "no-such-workspace")
      expect(failureMessage(unknown.exit)).toBe("unknown workspace: no-such-workspace")
      const workspace = yield* writeRow("Unwritable")
      const nowhere = yield* runCli("audit", "digest", "--workspace", workspace.slug, "--out", join(dir, "no", "f"))
      expect(failureMessage(nowhere.exit)).toBe(
        `cannot append to ${join(dir, "no", "f")}: ENOENT: no such file or directory`
      )
    })
  )
})

layer(TestServices, { excludeTestServices: true })("admin audit digest on a server without a key", (it) => {
  it.effect("refuses, naming LEDGER_SIGNING_KEY", () =>
    Effect.gen(function* () {
      const workspace = yield* writeRow("Keyless")
      const dir = yield* scratch
      const file = join(dir, "none.digests")
      const refused = yield* runCli("audit", "digest", "--workspace", workspace.slug, "--out", file)
      expect(failureMessage(refused.exit)).toMatch(/^no key to sign digests with: set LEDGER_SIGNING_KEY/)
      expect(() => statSync(file)).toThrow()
    })
  )
})
