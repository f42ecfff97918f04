import { join } from "node:path"
import { Cause, Clock, Effect, Option } from "effect"
import type { Workspace } from "../api/Workspace"
import { appendDigest, lastDigestIn } from "../ledger/digestFiles"
import { digestOf, signDigest } from "../ledger/Digests"
import type { SigningKey } from "../ledger/LedgerKeys"
import { requireSigningKey } from "../ledger/LedgerKeys"
import { readHead } from "../ledger/LedgerRows"
import { Workspaces } from "../tenancy/Workspaces"
import { WorkspaceWork } from "../tenancy/WorkspaceWork"

/** What one round did, by workspace: a digest written, none needed (the head did not move, or no row yet), or failed. */
export interface DigestRoundReport {
  readonly written: number
  readonly unchanged: number
  readonly failed: number
}

/** The file a workspace's digests are appended to in `dir`: `<slug>.digests`, NDJSON. */
export const digestFileOf = (dir: string, workspace: Pick<Workspace, "slug">) => join(dir, `${workspace.slug}.digests`)

/** A digest of the workspace's head appended to its file, unless the file's last digest is of that head already. */
const digestInto = (dir: string, workspace: Workspace, key: SigningKey) =>
  Effect.gen(function* () {
    const head = yield* readHead(workspace)
    if (head.position === "0") return "unchanged" as const
    const path = digestFileOf(dir, workspace)
    const last = yield* lastDigestIn(path)
    if (Option.isSome(last) && last.value.position === head.position && last.value.hash === head.hash)
      return "unchanged" as const
    if (Option.isSome(last) && BigInt(last.value.position) > BigInt(head.position))
      // Written down anyway: the file keeps what the database claimed; `admin audit verify` names the fault.
      yield* Effect.logWarning(
        "ledger digest: the head is behind the last digest: rows were removed, or a dropped workspace's slug was reused"
      ).pipe(Effect.annotateLogs({ path, digested: last.value.position, head: head.position }))
    const at = new Date(yield* Clock.currentTimeMillis)
    yield* appendDigest(path, signDigest(digestOf(workspace, head, at), key))
    return "written" as const
  })

/**
 * One round of the periodic digests (docs/ledger.md, "Taking and keeping
 * digests"): for every workspace whose ledger head moved since the last
 * digest in its file in `dir`, one signed digest appended. A workspace that
 * fails is logged and left to the next round; one being dropped is skipped.
 */
export const digestRound = (dir: string) =>
  Effect.gen(function* () {
    const key = yield* requireSigningKey
    const workspaces = yield* Workspaces
    const work = yield* WorkspaceWork
    const counts = { written: 0, unchanged: 0, failed: 0 }
    for (const workspace of yield* workspaces.list) {
      const outcome = yield* work.run(workspace.id, digestInto(dir, workspace, key)).pipe(
        Effect.map(Option.getOrElse(() => "unchanged" as const)),
        Effect.catchCause((cause) =>
          Effect.gen(function* () {
            const live = yield* Effect.orElseSucceed(workspaces.findBySlug(workspace.slug), () => Option.none())
            // Dropped meanwhile (elsewhere): nothing to digest.
            if (Option.isNone(live) || live.value.id !== workspace.id) return "unchanged" as const
            yield* Effect.logWarning(
              "ledger digest failed for a workspace; the next round tries again",
              Cause.pretty(cause)
            ).pipe(Effect.annotateLogs({ workspace: workspace.slug }))
            return "failed" as const
          })
        )
      )
      counts[outcome]++
    }
    return counts satisfies DigestRoundReport
  })
