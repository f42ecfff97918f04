import { Console, Effect, Option, Schema } from "effect"
import { resolve } from "node:path"
import { BadRequest, errorFields } from "../../api/errors"
import type { Workspace } from "../../api/Workspace"
import type { DigestClaim } from "../../chain/verifyChain"
import { readDigestFile } from "../../ledger/Digests"
import { trustedPublicKey } from "../../ledger/LedgerKeys"
import { verificationPassed, verifyLedger } from "../../ledger/Verification"
import { Workspaces } from "../../tenancy/Workspaces"
import { AdminInvocation } from "./AdminInvocation"
import { progressLine } from "./progressBar"
import { firstFailure, verificationReportLines } from "./verificationReport"

/** A workspace's ledger did not verify: the report printed before names what and where. */
export class LedgerUnverified extends Schema.TaggedError<LedgerUnverified>()("LedgerUnverified", errorFields, {
  httpApiStatus: 409
}) {}

/** The bar is redrawn at most this often. */
const redrawMs = 200

/** The claims of every file of digests, each checked against the trusted key; the first bad file refuses them all. */
const digestsIn = (files: ReadonlyArray<string>, workspace: Workspace) =>
  Effect.gen(function* () {
    if (files.length === 0) return []
    const trusted = yield* trustedPublicKey
    if (Option.isNone(trusted))
      return yield* new BadRequest({
        message:
          "--digest: no key to check digests against: set LEDGER_PUBLIC_KEY to the public key that signed them " +
          "(SPKI PEM, or its DER in base64)"
      })
    const { cwd } = yield* AdminInvocation
    const claims = yield* Effect.forEach(files, (file) => readDigestFile(resolve(cwd, file), workspace, trusted.value))
    return claims.flat()
  })

/**
 * `admin audit verify`: recomputes a workspace's ledger (docs/ledger.md,
 * "Verification") with a progress bar on standard error, checking the
 * digests of the files given, and prints what it checked and, when
 * something fails, the first failing position and what is wrong. Fails
 * (exit status 1) unless everything holds.
 */
export const auditVerify = ({
  digests,
  workspace
}: {
  readonly workspace: string
  readonly digests: ReadonlyArray<string>
}) =>
  Effect.gen(function* () {
    const target = yield* (yield* Workspaces).get(workspace)
    const claims: ReadonlyArray<DigestClaim> = yield* digestsIn(digests, target)
    const tty = (yield* AdminInvocation).progress
    const started = Date.now()
    let drawn = 0
    let done = { rows: 0, total: 0 }
    const draw = (last: boolean) =>
      Effect.sync(() => {
        if (!tty || (!last && Date.now() - drawn < redrawMs)) return
        drawn = Date.now()
        process.stderr.write(`\r${progressLine(done.rows, done.total, Date.now() - started)}${last ? "\n" : ""}`)
      })
    const report = yield* verifyLedger(target, claims, (rows, total) => {
      done = { rows, total }
      return draw(false)
    })
    yield* draw(true)
    for (const line of verificationReportLines(target, report, claims)) yield* Console.log(line)
    if (verificationPassed(report)) return
    return yield* new LedgerUnverified({
      message: `the ledger of ${target.slug} does not verify: first at ${firstFailure(report) ?? "?"}`
    })
  })
