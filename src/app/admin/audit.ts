import { Command, Flag } from "effect/cli"
import { command } from "./presenter"
import { run } from "./runHandler"

const auditDigest = command(
  "digest",
  {
    workspace: Flag.String("workspace").pipe(Flag.withDescription("workspace slug")),
    out: Flag.String("out").pipe(
      Flag.optional,
      Flag.withDescription("append the digest to this file (made, mode 0600, when new) instead of printing it")
    )
  },
  (options) => run((handlers) => handlers.auditDigest(options))
).pipe(Command.withDescription("Sign the workspace ledger's head (a digest) and print it, or append it to a file"))

const auditVerify = command(
  "verify",
  {
    workspace: Flag.String("workspace").pipe(Flag.withDescription("workspace slug")),
    digests: Flag.String("digest").pipe(
      Flag.atLeast(0),
      Flag.withDescription(
        "a file of digests taken earlier (one per line, as `audit digest --out` writes them), checked against " +
          "LEDGER_PUBLIC_KEY; may be given more than once"
      )
    )
  },
  (options) => run((handlers) => handlers.auditVerify(options))
).pipe(
  Command.withDescription(
    "Verify a workspace's audit ledger: its hash chain, the digests given and every record against its timeline"
  )
)

const auditErase = command(
  "erase",
  {
    workspace: Flag.String("workspace").pipe(Flag.withDescription("workspace slug")),
    record: Flag.String("record").pipe(Flag.withDescription("the record: <namespace>/<name>/<id>")),
    fields: Flag.String("field").pipe(
      Flag.atLeast(0),
      Flag.withDescription(
        "a field path: `email`, `address.street` (a struct's member), `lineItems.product` (the member of every " +
          "entry); may be given more than once; none: every value of the record (a live record is deleted)"
      )
    )
  },
  (options) => run((handlers) => handlers.auditErase(options))
).pipe(Command.withDescription("Erase values of a record from its whole history; the ledger still verifies"))

/**
 * `admin audit`: the verifiable audit ledger (docs/ledger.md). The commands'
 * bodies are in auditDigest.ts, auditVerify.ts and auditErase.ts, loaded
 * through handlers.ts when one runs.
 */
export const auditGroup = Command.make("audit").pipe(
  Command.withDescription("The verifiable audit ledger"),
  Command.withSubcommands([auditDigest, auditVerify, auditErase])
)
