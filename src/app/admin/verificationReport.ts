import type { Workspace } from "../../api/Workspace"
import type { ChainFault, DigestClaim } from "../../chain/verifyChain"
import type { RecordFault, VerificationReport } from "../../ledger/Verification"

/** What each fault says happened, in a few words (docs/ledger.md, "Verification"). */
export const faultNames: Record<ChainFault["kind"] | RecordFault["kind"], string> = {
  changed: "row changed",
  missing: "row missing",
  reordered: "rows reordered",
  inserted: "row inserted",
  rewritten: "history rewritten after a digest",
  record: "record changed behind its timeline"
}

const grouped = (n: number | bigint) => n.toLocaleString("en-US")

/**
 * How a digest fared: the chain checks each digest as it passes its
 * position, so one before the first failing position matched; a rewrite is
 * told by the first digest past the last one that matched (`mismatched`);
 * any other digest was not reached.
 */
const digestOutcome = (digest: DigestClaim, fault: ChainFault | null, mismatched: bigint | undefined) => {
  if (fault === null || digest.position < fault.position) return "matches"
  if (digest.position === mismatched) return "DOES NOT MATCH: the history up to it was rewritten after it was taken"
  return "not checked: the chain fails before its position"
}

const recordLine = (fault: RecordFault) =>
  `  position ${grouped(fault.position)}: ${fault.businessObject} ${fault.id}: ${fault.detail}`

/** The first thing that fails, in one line: the chain's first position, else the first record. */
export const firstFailure = (report: VerificationReport): string | undefined => {
  const chain = report.chainFault
  if (chain !== null) return `position ${grouped(chain.position)}, ${faultNames[chain.kind]}: ${chain.detail}`
  const [record] = report.recordFaults
  return record === undefined
    ? undefined
    : `position ${grouped(record.position)}, ${faultNames.record} (${record.businessObject} ${record.id}): ${record.detail}`
}

/**
 * The report `admin audit verify` prints: what was checked (rows, records,
 * the head, each digest), then, when something fails, the chain's first
 * failing position before the records changed behind their timelines.
 */
export const verificationReportLines = (
  workspace: Workspace,
  report: VerificationReport,
  digests: ReadonlyArray<DigestClaim>
): ReadonlyArray<string> => {
  const fault = report.chainFault
  const sorted = [...digests].sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0))
  const mismatched =
    fault?.kind === "rewritten" ? sorted.find((digest) => digest.position >= fault.position)?.position : undefined
  const lines = [
    `ledger of workspace ${workspace.slug} (schema ${workspace.schema})`,
    `rows checked:    ${grouped(report.rows)}`,
    `records checked: ${grouped(report.records)}`,
    ...(report.recordsWaiting === 0
      ? []
      : [
          `records waiting: ${grouped(report.recordsWaiting)} with rows not positioned yet (the feed's positioner is behind): the next run checks them`
        ]),
    `head:            position ${grouped(report.head.position)}, hash ${report.head.hash}`,
    sorted.length === 0
      ? "digests:         none given (only a digest taken earlier shows a history rewritten whole)"
      : `digests:         ${sorted.length}`,
    ...sorted.map(
      (digest) =>
        `  position ${grouped(digest.position)}: ${digestOutcome(digest, fault, mismatched)} (${digest.label})`
    ),
    fault === null
      ? "chain:           every row chains from the first to the head"
      : `chain:           FAILS at position ${grouped(fault.position)}, ${faultNames[fault.kind]}: ${fault.detail}`,
    report.recordFaults.length === 0
      ? "records:         every record is what its timeline replays to"
      : `records:         ${grouped(report.recordFaults.length)} ${report.recordFaults.length === 1 ? "record" : "records"} changed behind ${report.recordFaults.length === 1 ? "its timeline" : "their timelines"}:`,
    ...report.recordFaults.map(recordLine)
  ]
  const first = firstFailure(report)
  return [...lines, first === undefined ? "verified" : `FAILED: first at ${first}`]
}
