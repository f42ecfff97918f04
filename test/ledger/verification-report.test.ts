import { describe, expect, it } from "@effect/vitest"
import { Workspace } from "../../src/api/Workspace"
import { verificationReportLines } from "../../src/app/admin/verificationReport"
import type { VerificationReport } from "../../src/ledger/Verification"

/**
 * What `admin audit verify` prints about records it could not check yet: in
 * WAL mode a record whose newest rows wait for their feed position is left for
 * the next run, and the report says how many, instead of counting it checked.
 */

const workspace = new Workspace({ id: "w1", slug: "acme", name: "Acme" })

const report = (recordsWaiting: number): VerificationReport => ({
  rows: 1_200,
  records: 300,
  recordsWaiting,
  head: { position: 1_200n, hash: "ab".repeat(32) },
  chainFault: null,
  recordFaults: []
})

describe("the verification report", () => {
  it("names the records left for the next run, and still passes", () => {
    const lines = verificationReportLines(workspace, report(2), [])
    expect(lines).toContain("records checked: 300")
    expect(lines.filter((line) => line.startsWith("records waiting: 2 with rows not positioned yet"))).toHaveLength(1)
    expect(lines.at(-1)).toBe("verified")
  })

  it("says nothing of waiting when no record waits", () => {
    expect(verificationReportLines(workspace, report(0), []).some((line) => line.startsWith("records waiting"))).toBe(
      false
    )
  })
})
