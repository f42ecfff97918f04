import { Command } from "effect/cli"
import { auditDigest } from "./auditDigest"
import { auditErase } from "./auditErase"
import { auditVerify } from "./auditVerify"

/** `admin audit`: the verifiable audit ledger (docs/ledger.md). */
export const auditGroup = Command.make("audit").pipe(
  Command.withDescription("The verifiable audit ledger"),
  Command.withSubcommands([auditDigest, auditVerify, auditErase])
)
