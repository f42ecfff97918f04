import { generateKeyPairSync, sign } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Exit, Option, Result } from "effect"
import type { Workspace } from "../../src/api/Workspace"
import { canonicalJson } from "../../src/chain/canonicalJson"
import type { FieldPath } from "../../src/chain/erase"
import { eraseRow } from "../../src/chain/erase"
import { withActor } from "../../src/context/Frames"
import { digestLine, digestOf, parseDigestFile, signDigest } from "../../src/ledger/Digests"
import type { StoredChainRow } from "../../src/ledger/LedgerRows"
import { eachLedgerBatch, readHead, saltsOf } from "../../src/ledger/LedgerRows"
import { verifyLedger } from "../../src/ledger/Verification"
import { Records } from "../../src/records/Records"
import { ParentCorrelation } from "../../src/unitOfWork/ParentCorrelation"
import { UnitOfWork } from "../../src/unitOfWork/UnitOfWork"
import { runCli } from "../support/cli"
import { runProcess } from "../support/subprocess"
import { freshWorkspace, TestServices } from "../support/TestApp"

/**
 * scripts/verify-ledger-export.mjs, the auditor's own implementation of
 * docs/ledger.md "Formats", run as a child process over what the service
 * wrote and exported: it passes on the export as it is and names the first
 * position of each kind of edit to the file.
 */

const someone = { kind: "user", id: "u-auditor", name: "Zoë Ledger ☃", email: "zoe@example.com" } as const
const script = join(__dirname, "../../scripts/verify-ledger-export.mjs")

const scratch = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "ledger-audit-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const audit = (exportFile: string, digestFile: string, keyFile: string) =>
  runProcess(process.execPath, [script, "--export", exportFile, "--digest", digestFile, "--public-key", keyFile])

/** Writes the rows of a small CRM history: nested struct and collection changes, a cascade, every verb. */
const writeHistory = (workspace: Workspace) =>
  Effect.gen(function* () {
    const records = yield* Records
    const units = yield* UnitOfWork
    const company = yield* units.run(
      workspace,
      records.create("crm/company", { name: "Auditco ☃ 😀", website: "https://audit.example", wonDeals: 0.1 })
    )
    const gone = yield* units.run(workspace, records.create("crm/company", { name: "Gone GmbH" }))
    const deal = yield* units.run(
      workspace,
      records.create("crm/deal", {
        title: "Kiosk rollout",
        stage: "lead",
        amount: "100.00",
        company: company.id,
        address: { street: "Main 1", city: "Oslo", country: "NO" },
        lineItems: [
          { product: "Screen", quantity: 2, price: "10.00" },
          { product: "Stand", quantity: 1 }
        ]
      })
    )
    const [screen] = Array.isArray(deal.values.lineItems) ? deal.values.lineItems : []
    const screenId = typeof screen === "object" && screen !== null && "id" in screen ? screen.id : undefined
    yield* units.run(
      workspace,
      records.update("crm/deal", deal.id, {
        address: { street: "Main 2", city: "Lyon", country: "FR" },
        lineItems: [
          { id: screenId, product: "Screen XL", quantity: 3, price: "12.50" },
          { product: "Cable", quantity: 10, price: "0.99" }
        ]
      })
    )
    // One unit writing several rows, run as the job of another unit (its rows name a parent).
    yield* units
      .run(
        workspace,
        Effect.gen(function* () {
          yield* records.create("crm/activity", { subject: "Call 1", company: company.id })
          yield* records.create("crm/activity", { subject: "Call 2" })
          yield* records.update("crm/deal", deal.id, { amount: "250.00", stage: "open" })
        })
      )
      .pipe(Effect.provideService(ParentCorrelation, Option.some(crypto.randomUUID())))
    for (let i = 0; i < 6; i++) {
      yield* units.run(
        workspace,
        records.update("crm/deal", deal.id, { title: `Kiosk rollout ${i}`, amount: `${i}.50` })
      )
    }
    yield* units.run(workspace, records.archive("crm/deal", deal.id))
    yield* units.run(workspace, records.restore("crm/deal", deal.id))
    yield* units.run(workspace, records.remove("crm/company", gone.id))
    yield* units.run(workspace, records.update("crm/company", company.id, { website: null }))
  })

const ledgerRows = (workspace: Workspace) =>
  Effect.gen(function* () {
    const rows: Array<StoredChainRow> = []
    yield* eachLedgerBatch(workspace, 1_000, (batch) =>
      Effect.sync(() => {
        rows.push(...batch)
        return true
      })
    )
    return rows
  })

/** What an erasure leaves in a row (src/chain/erase.ts): the values at `paths` gone, their commitments kept. */
const eraseInRow = (workspace: Workspace, row: StoredChainRow, paths: ReadonlyArray<FieldPath>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const erased = eraseRow(row, saltsOf(row), paths)
    expect(erased.erasedNow).toBeGreaterThan(0)
    const published = Object.fromEntries(
      [...erased.published].map(([pointer, salt]) => [pointer, Buffer.from(salt).toString("hex")])
    )
    const jsonb = (value: unknown) => (value === null ? null : JSON.stringify(value))
    yield* sql
      .withTransaction(
        Effect.andThen(
          sql`SET LOCAL abs.audit_erasure = 'on'`,
          sql`UPDATE ${sql(workspace.table("audit_entries"))} SET record = ${jsonb(erased.record)}::jsonb,
            changes = ${jsonb(erased.changes)}::jsonb, salt = NULL, erased_salts = ${JSON.stringify(published)}::jsonb
            WHERE id = ${row.id}::uuid`
        )
      )
      .pipe(Effect.orDie)
  })

const lines = (text: string) => text.trimEnd().split("\n")
const positionOf = (line: string | undefined): string => JSON.parse(line ?? "{}").position

layer(TestServices, { excludeTestServices: true })("an auditor verifies the ledger with the export alone", (it) => {
  it.effect(
    "the script recomputes the chain and the digests; an edit to the export fails at its position",
    () =>
      Effect.gen(function* () {
        const workspace = yield* freshWorkspace
        yield* writeHistory(workspace)
        const written = yield* ledgerRows(workspace)
        const created = written.find((row) => row.businessObject === "crm/deal" && row.operation === "created")
        const reshaped = written.find(
          (row) =>
            row.businessObject === "crm/deal" && row.operation === "updated" && row.changes?.lineItems !== undefined
        )
        if (created === undefined || reshaped === undefined) throw new Error("the history lacks its deal rows")
        yield* eraseInRow(workspace, created, [["title"], ["address", "city"]])
        yield* eraseInRow(workspace, reshaped, [
          ["lineItems", "product"],
          ["address", "street"]
        ])

        const dir = yield* scratch
        const exported = join(dir, "feed.ndjson")
        const run = yield* runCli("feed", "export", "--workspace", workspace.slug, exported)
        expect(Exit.isSuccess(run.exit), JSON.stringify(run.stderr)).toBe(true)
        const text = readFileSync(exported, "utf8")
        const all = lines(text)
        expect(all.length).toBe(written.length)
        expect(text).toContain('"$erased"')
        expect(text).toContain('"erasedSalts": {"/')

        // Digests signed by hand as docs/ledger.md "Digests" says, and one signed by the service's signer.
        const { privateKey, publicKey } = generateKeyPairSync("ed25519")
        const publicKeyText = publicKey.export({ type: "spki", format: "der" }).toString("base64")
        const signed = (position: string, hash: string) => {
          const digest = {
            format: "abs-ledger-digest/v1",
            workspace: workspace.slug,
            schema: workspace.schema,
            position,
            hash,
            at: new Date().toISOString(),
            publicKey: publicKeyText
          }
          const signature = sign(null, Buffer.from(canonicalJson(digest), "utf8"), privateKey).toString("base64")
          return `${JSON.stringify({ ...digest, signature })}\n`
        }
        const middle = JSON.parse(all[Math.floor(all.length / 2)] ?? "{}")
        const head = yield* readHead(workspace)
        const byService = digestLine(
          signDigest(digestOf(workspace, head, new Date()), {
            privateKey,
            publicKey: publicKeyText,
            source: { kind: "configured" }
          })
        )
        const digests = join(dir, "digests.ndjson")
        const digestText = signed(middle.position, middle.hash) + signed(head.position, head.hash) + byService
        writeFileSync(digests, digestText)
        const keyFile = join(dir, "ledger.pub.pem")
        writeFileSync(keyFile, publicKey.export({ type: "spki", format: "pem" }))

        // The service agrees: it takes the hand-signed digests, and its own chain verification passes.
        // (Its record replay is not asked: this test erased audit values only, not the records' own.)
        const claims = parseDigestFile(digestText, digests, workspace, publicKey)
        if (Result.isFailure(claims)) throw new Error(claims.failure.message)
        expect(claims.success).toHaveLength(3)
        expect((yield* verifyLedger(workspace, claims.success)).chainFault).toBeNull()

        const passed = yield* audit(exported, digests, keyFile)
        expect(passed.stdout + passed.stderr).toMatch(
          new RegExp(
            `^OK ${workspace.slug} \\(${workspace.schema}\\): ${all.length} rows, head position ${head.position} hash ${head.hash}\n`
          )
        )
        expect(passed.code).toBe(0)

        const tampered = (name: string, edit: (rows: Array<string>) => Array<string>) => {
          const file = join(dir, name)
          writeFileSync(file, `${edit([...all]).join("\n")}\n`)
          return audit(file, digests, keyFile)
        }
        const failsAt = (
          result: { readonly code: number | null; readonly stdout: string },
          position: string,
          why: string
        ) => {
          expect(result.stdout).toMatch(new RegExp(`^FAILED at position ${position}: ${why}`))
          expect(result.code).toBe(1)
        }

        // A value: the amount one update set.
        const amountAt = all.findIndex((line, i) => i < all.length - 2 && line.includes('"amount": {"to": "3.50"'))
        expect(amountAt).toBeGreaterThan(0)
        const changedValue = yield* tampered("value.ndjson", (rows) =>
          rows.map((line, i) => (i === amountAt ? line.replace('"to": "3.50"', '"to": "3500.00"') : line))
        )
        failsAt(changedValue, positionOf(all[amountAt]), "changed")

        // A line removed from the middle.
        const removedAt = Math.floor(all.length / 3)
        const removed = yield* tampered("removed.ndjson", (rows) => rows.filter((_, i) => i !== removedAt))
        failsAt(removed, positionOf(all[removedAt]), "missing")

        // Two lines swapped.
        const swappedAt = removedAt + 2
        const swapped = yield* tampered("swapped.ndjson", (rows) => {
          const [a, b] = [rows[swappedAt], rows[swappedAt + 1]]
          if (a !== undefined && b !== undefined) rows.splice(swappedAt, 2, b, a)
          return rows
        })
        failsAt(swapped, positionOf(all[swappedAt]), "the lines of positions")

        // The last line removed: only the digest at the head tells.
        const truncated = yield* tampered("truncated.ndjson", (rows) => rows.slice(0, -1))
        failsAt(truncated, head.position, "missing")

        // A salt published for an erased row removed: its values can no longer be checked.
        const erasedAt = all.findIndex((line) => line.includes('"erasedSalts": {"/'))
        const saltless = yield* tampered("saltless.ndjson", (rows) =>
          rows.map((line, i) => (i === erasedAt ? line.replace(/"erasedSalts": \{[^}]*\}/, '"erasedSalts": {}') : line))
        )
        failsAt(saltless, positionOf(all[erasedAt]), "changed: the value at /")

        // Digests: one not signed by the trusted key; one that disagrees with the chain.
        const other = generateKeyPairSync("ed25519").publicKey
        const otherKey = join(dir, "other.pub.pem")
        writeFileSync(otherKey, other.export({ type: "spki", format: "pem" }))
        failsAt(yield* audit(exported, digests, otherKey), middle.position, "the digest on line 1 .* names another key")
        const wrongDigest = join(dir, "wrong.ndjson")
        writeFileSync(wrongDigest, signed(middle.position, head.hash))
        failsAt(yield* audit(exported, wrongDigest, keyFile), "1", "rewritten")

        const usage = yield* audit(exported, digests, join(dir, "missing.pem"))
        expect(usage.code).toBe(2)
      }).pipe(withActor(someone)),
    { timeout: 60_000 }
  )
})
