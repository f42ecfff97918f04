import { Console, Effect, Option } from "effect"
import { resolve } from "node:path"
import { appendDigest } from "../../ledger/digestFiles"
import { digestLine, takeDigest } from "../../ledger/Digests"
import { requireSigningKey } from "../../ledger/LedgerKeys"
import { Workspaces } from "../../tenancy/Workspaces"
import { AdminInvocation } from "./AdminInvocation"

/**
 * `admin audit digest`: the workspace ledger's head as a signed digest
 * (docs/ledger.md, "Digests"), printed as its line, or appended to a file
 * (made 0600 when new). Without a key it refuses, naming the variable; on
 * the embedded database it makes one in the data directory the first time,
 * and says so on standard error.
 */
export const auditDigest = ({ out, workspace }: { readonly workspace: string; readonly out: Option.Option<string> }) =>
  Effect.gen(function* () {
    const target = yield* (yield* Workspaces).get(workspace)
    const key = yield* requireSigningKey
    if (key.source.kind === "data-dir" && key.source.made)
      yield* Console.error(
        `made a signing key in ${key.source.path} (mode 0600; set LEDGER_SIGNING_KEY to use your own). ` +
          `Keep a copy of it; verifiers trust its public key: ${key.publicKey}`
      )
    const digest = yield* takeDigest(target, Option.some(key))
    if (Option.isNone(out)) return yield* Console.log(digestLine(digest).trimEnd())
    const path = resolve((yield* AdminInvocation).cwd, out.value)
    yield* appendDigest(path, digest)
    yield* Console.error(`digest of ${target.slug} at position ${digest.position} appended to ${path}`)
  })
