import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { expect, it, layer } from "@effect/vitest"
import { Effect, Exit, Schema } from "effect"
import { FeedEntry, LedgerFeedEntry } from "../../src/api/Feed"
import { Feed, feedLine } from "../../src/audit/Feed"
import { feedStart } from "../../src/audit/FeedCursor"
import { progressLine } from "../../src/app/admin/progressBar"
import { withActor } from "../../src/context/Frames"
import { Records } from "../../src/records/Records"
import { UnitOfWork } from "../../src/unitOfWork/UnitOfWork"
import { runCli } from "../support/cli"
import { freshWorkspace, TestServices } from "../support/TestApp"

const someone = { kind: "user", id: "u-export", name: "Exporter", email: "exporter@example.com" } as const

const scratch = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "feed-export-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

layer(TestServices, { excludeTestServices: true })("admin feed export", (it) => {
  it.effect(
    "writes the feed as NDJSON, the HTTP export's lines with the ledger fields; a filter and a cursor narrow it",
    () =>
      Effect.gen(function* () {
        const workspace = yield* freshWorkspace
        const records = yield* Records
        const units = yield* UnitOfWork
        const feed = yield* Feed
        for (let i = 0; i < 5; i++) {
          yield* units.run(workspace, records.create("crm/company", { name: `Exported ${i}` }))
        }
        const dir = yield* scratch
        const all = join(dir, "all.ndjson")
        const run = yield* runCli("feed", "export", "--workspace", workspace.slug, all)
        expect(Exit.isSuccess(run.exit), JSON.stringify(run.stderr)).toBe(true)
        const lines = (shape: "entry" | "ledger") =>
          Effect.map(feed.batch(workspace, feedStart, { readable: "all" }, 500, shape), (batch) =>
            batch.rows.map(feedLine).join("")
          )
        const written = readFileSync(all, "utf8")
        expect(written).toBe(yield* lines("ledger"))
        const ledgerFields = ["position", "parentCorrelationId", "recordVersion", "salt", "erasedSalts", "hash"]
        const withoutLedger = written
          .trimEnd()
          .split("\n")
          .map((line) => {
            const entry = Schema.decodeUnknownSync(Schema.fromJsonString(LedgerFeedEntry))(line)
            expect(entry.hash).toMatch(/^[0-9a-f]{64}$/)
            return Object.fromEntries(Object.entries(JSON.parse(line)).filter(([key]) => !ledgerFields.includes(key)))
          })
        const httpLines = (yield* lines("entry")).trimEnd().split("\n")
        expect(withoutLedger).toEqual(httpLines.map((line) => JSON.parse(line)))
        expect(run.stderr.at(-1)).toMatch(/^exported \d+ rows to .*; go on with --cursor \S+$/)

        // Only companies, after the third company row.
        const companies = written
          .trimEnd()
          .split("\n")
          .map((line) => Schema.decodeUnknownSync(Schema.fromJsonString(FeedEntry))(line))
          .filter((entry) => entry.businessObject === "crm/company")
        const third = companies[2]
        const part = join(dir, "part.ndjson")
        const narrowed = yield* runCli(
          "feed",
          "export",
          "--workspace",
          workspace.slug,
          "--business-object",
          "crm/company",
          "--cursor",
          third?.cursor ?? "",
          part
        )
        expect(Exit.isSuccess(narrowed.exit)).toBe(true)
        const ids = readFileSync(part, "utf8")
          .trimEnd()
          .split("\n")
          .map((line) => Schema.decodeUnknownSync(Schema.fromJsonString(FeedEntry))(line).id)
        expect(ids).toEqual(companies.slice(3).map((entry) => entry.id))

        const bad = yield* runCli("feed", "export", "--workspace", workspace.slug, "--from", "yesterday", part)
        expect(Exit.isFailure(bad.exit)).toBe(true)
        const badCursor = yield* runCli("feed", "export", "--workspace", workspace.slug, "--cursor", "junk", part)
        expect(Exit.isFailure(badCursor.exit)).toBe(true)
      }).pipe(withActor(someone))
  )
})

it("the progress line: a bar with rows of a known total, the count alone without one", () => {
  expect(progressLine(250, 1_000, 1_000)).toBe(`[${"#".repeat(8)}${".".repeat(22)}] 250 / 1,000 rows  250 rows/s`)
  expect(progressLine(1_000, 1_000, 500)).toBe(`[${"#".repeat(30)}] 1,000 / 1,000 rows  2,000 rows/s`)
  expect(progressLine(12_345, undefined, 0)).toBe("12,345 rows  0 rows/s")
})
