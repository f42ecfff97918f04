import { generateKeyPairSync } from "node:crypto"
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { Cause, Effect, Exit, Option, Redacted } from "effect"
import type { Workspace } from "../../src/api/Workspace"
import { withActor } from "../../src/context/Frames"
import { digestLine, digestOf, signDigest } from "../../src/ledger/Digests"
import { publicKeyText } from "../../src/ledger/LedgerKeys"
import { readHead } from "../../src/ledger/LedgerRows"
import { Records } from "../../src/records/Records"
import { UnitOfWork } from "../../src/unitOfWork/UnitOfWork"
import { runCli } from "../support/cli"
import { freshWorkspace, testServices } from "../support/TestApp"

const someone = { kind: "user", id: "u-verify", name: "Verifier", email: "verifier@example.com" } as const

const signer = generateKeyPairSync("ed25519")
const signingKey = {
  privateKey: signer.privateKey,
  publicKey: publicKeyText(signer.privateKey),
  source: { kind: "configured" }
} as const

const scratch = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "audit-verify-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

/** `n` companies, one unit of work each, then one of them renamed. */
const writeRows = (workspace: Workspace, n: number) =>
  Effect.gen(function* () {
    const records = yield* Records
    const units = yield* UnitOfWork
    const created = []
    for (let i = 0; i < n; i++)
      created.push(yield* units.run(workspace, records.create("crm/company", { name: `Company ${i}` })))
    const [first] = created
    if (first !== undefined) yield* units.run(workspace, records.update("crm/company", first.id, { name: "Renamed" }))
    return created
  }).pipe(withActor(someone))

/** The one error a failed run failed with: its tag and message. */
const failureOf = (exit: Exit.Exit<unknown, unknown>) =>
  Exit.isFailure(exit)
    ? Option.getOrUndefined(
        Option.map(Cause.findErrorOption(exit.cause), (error) =>
          typeof error === "object" && error !== null && "_tag" in error && "message" in error
            ? { tag: error._tag, message: error.message }
            : { tag: "?", message: String(error) }
        )
      )
    : undefined

/** What a run printed on standard output, one line an entry. */
const linesOf = (stdout: ReadonlyArray<string>) => stdout.flatMap((text) => text.split("\n"))

const Signing = testServices({ ledgerSigningKey: Option.some(Redacted.make(signer.privateKey)) })

layer(Signing, { excludeTestServices: true })("admin audit verify", (it) => {
  it.effect("an untouched ledger with two digest files: every check named, exit status 0", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const dir = yield* scratch
      const digests = join(dir, "digests.ndjson")
      const other = join(dir, "more.ndjson")
      yield* writeRows(workspace, 3)
      expect(
        Exit.isSuccess((yield* runCli("audit", "digest", "--workspace", workspace.slug, "--out", digests)).exit)
      ).toBe(true)
      yield* writeRows(workspace, 2)
      expect(
        Exit.isSuccess((yield* runCli("audit", "digest", "--workspace", workspace.slug, "--out", other)).exit)
      ).toBe(true)
      const head = yield* readHead(workspace)

      const run = yield* runCli(
        "audit",
        "verify",
        "--workspace",
        workspace.slug,
        "--digest",
        digests,
        "--digest",
        other
      )
      expect(failureOf(run.exit)).toBeUndefined()
      expect(Exit.isSuccess(run.exit)).toBe(true)
      expect(linesOf(run.stdout)).toEqual([
        `ledger of workspace ${workspace.slug} (schema ${workspace.schema})`,
        "rows checked:    7",
        "records checked: 5",
        `head:            position 7, hash ${head.hash}`,
        "digests:         2",
        `  position 4: matches (the digest on line 1 of ${digests})`,
        `  position 7: matches (the digest on line 1 of ${other})`,
        "chain:           every row chains from the first to the head",
        "records:         every record is what its timeline replays to",
        "verified"
      ])

      // The help lists --digest as optional and repeatable.
      const help = yield* runCli("audit", "--help")
      expect(help.stdout.join("\n")).toMatch(/^ {2}verify --workspace text \[--digest text\]\.\.\.$/m)

      const bare = yield* runCli("audit", "verify", "--workspace", workspace.slug)
      expect(Exit.isSuccess(bare.exit)).toBe(true)
      expect(linesOf(bare.stdout)).toContain(
        "digests:         none given (only a digest taken earlier shows a history rewritten whole)"
      )
    })
  )

  it.effect("a changed row and a changed record: the chain's first position first, then the record; exit 1", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const [, second, third] = yield* writeRows(workspace, 3)
      const sql = yield* SqlClient.SqlClient
      const table = sql(workspace.table("audit_entries"))
      yield* sql`ALTER TABLE ${table} DISABLE TRIGGER USER`
      yield* sql`UPDATE ${table} SET record = jsonb_set(record, '{name}', '"Forged"') WHERE position = 3`
      yield* sql`ALTER TABLE ${table} ENABLE TRIGGER USER`
      yield* sql`UPDATE ${sql(workspace.table("records"))} SET values = jsonb_set(values, '{name}', '"Changed"')
        WHERE id = ${second?.id ?? ""}`

      const run = yield* runCli("audit", "verify", "--workspace", workspace.slug)
      const lines = linesOf(run.stdout)
      expect(lines.slice(-5)).toEqual([
        "chain:           FAILS at position 3, row changed: the row's content no longer matches its hash",
        "records:         2 records changed behind their timelines:",
        `  position 2: crm/company ${second?.id}: its values are not what its timeline replays to`,
        `  position 3: crm/company ${third?.id}: its values are not what its timeline replays to`,
        "FAILED: first at position 3, row changed: the row's content no longer matches its hash"
      ])
      expect(failureOf(run.exit)).toEqual({
        tag: "LedgerUnverified",
        message: `the ledger of ${workspace.slug} does not verify: first at position 3, row changed: the row's content no longer matches its hash`
      })
    })
  )

  it.effect("a digest the chain does not match: that digest named, history rewritten after it; exit 1", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const dir = yield* scratch
      const path = join(dir, "digests.ndjson")
      yield* writeRows(workspace, 2)
      const early = yield* readHead(workspace)
      yield* writeRows(workspace, 2)
      const late = yield* readHead(workspace)
      // Signed by the trusted key, but for a head this chain never had at that position.
      const at = new Date()
      const good = signDigest(digestOf(workspace, early, at), signingKey)
      const forged = signDigest(digestOf(workspace, { position: late.position, hash: early.hash }, at), signingKey)
      writeFileSync(path, digestLine(good) + digestLine(forged))

      const run = yield* runCli("audit", "verify", "--workspace", workspace.slug, "--digest", path)
      const lines = linesOf(run.stdout)
      expect(lines).toContain(`  position ${early.position}: matches (the digest on line 1 of ${path})`)
      expect(lines).toContain(
        `  position ${late.position}: DOES NOT MATCH: the history up to it was rewritten after it was taken (the digest on line 2 of ${path})`
      )
      const next = BigInt(early.position) + 1n
      expect(lines.find((line) => line.startsWith("chain:"))).toMatch(
        new RegExp(`^chain: +FAILS at position ${next}, history rewritten after a digest: `)
      )
      expect(failureOf(run.exit)?.tag).toBe("LedgerUnverified")
    })
  )

  it.effect("a digest file changed after signing, or missing: refused before anything is verified", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const dir = yield* scratch
      const path = join(dir, "digests.ndjson")
      yield* writeRows(workspace, 1)
      expect(
        Exit.isSuccess((yield* runCli("audit", "digest", "--workspace", workspace.slug, "--out", path)).exit)
      ).toBe(true)
      appendFileSync(path, readFileSync(path, "utf8").replace(/"position":"\d+"/, '"position":"1"'))

      const changed = yield* runCli("audit", "verify", "--workspace", workspace.slug, "--digest", path)
      expect(changed.stdout).toEqual([])
      expect(failureOf(changed.exit)).toEqual({
        tag: "BadDigestFile",
        message: `${path}, line 2: its signature does not match its content: the line was changed after it was signed`
      })
      const missing = join(dir, "nowhere.ndjson")
      const gone = yield* runCli("audit", "verify", "--workspace", workspace.slug, "--digest", missing)
      expect(failureOf(gone.exit)?.message).toMatch(new RegExp(`^${missing}: cannot be read: ENOENT`))
      const unknown = yield* runCli("audit", "verify", "--workspace", "no-such-workspace")
      expect(failureOf(unknown.exit)).toEqual({ tag: "NotFound", message: "unknown workspace: no-such-workspace" })
    })
  )
})

layer(testServices({ ledgerSigningKey: Option.none(), ledgerPublicKey: Option.none() }), {
  excludeTestServices: true
})("admin audit verify without a key to trust", (it) => {
  it.effect("--digest is refused, naming the variable; without it, the chain and records are still verified", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const dir = yield* scratch
      const path = join(dir, "digests.ndjson")
      yield* writeRows(workspace, 1)
      writeFileSync(path, "")
      const refused = yield* runCli("audit", "verify", "--workspace", workspace.slug, "--digest", path)
      expect(failureOf(refused.exit)).toEqual({
        tag: "BadRequest",
        message:
          "--digest: no key to check digests against: set LEDGER_PUBLIC_KEY to the public key that signed them " +
          "(SPKI PEM, or its DER in base64)"
      })
      const run = yield* runCli("audit", "verify", "--workspace", workspace.slug)
      expect(Exit.isSuccess(run.exit)).toBe(true)
      expect(linesOf(run.stdout).at(-1)).toBe("verified")
    })
  )
})
