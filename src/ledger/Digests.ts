import type { KeyObject } from "node:crypto"
import { sign, verify } from "node:crypto"
import { readFile } from "node:fs/promises"
import { Clock, Effect, Option, Predicate, Result, Schema, SchemaIssue } from "effect"
import { LedgerDigest, ledgerDigestFormat } from "../api/AuditApi"
import { errorFields } from "../api/errors"
import type { Workspace } from "../api/Workspace"
import { canonicalJson } from "../chain/canonicalJson"
import type { DigestClaim } from "../chain/verifyChain"
import type { LedgerHead } from "./LedgerRows"
import { readHead } from "./LedgerRows"
import type { SigningKey } from "./LedgerKeys"
import { publicKeyText, signingKey } from "./LedgerKeys"
import { fromJsonText } from "../json/fromJsonText"

/** A file of digests that cannot be trusted as it is: its message names the file and the line. */
export class BadDigestFile extends Schema.TaggedError<BadDigestFile>()("BadDigestFile", errorFields, {
  httpApiStatus: 422
}) {}

/** The digest of `head`, taken at `at`, unsigned. */
export const digestOf = (
  workspace: Workspace,
  head: Pick<LedgerHead, "position" | "hash">,
  at: Date
): LedgerDigest => ({
  format: ledgerDigestFormat,
  workspace: workspace.slug,
  schema: workspace.schema,
  position: head.position,
  hash: head.hash,
  at: at.toISOString()
})

/** What a signature covers: the canonical JSON of the digest without its `signature` (docs/ledger.md, "Digests"). */
const signedBytes = (digest: LedgerDigest) =>
  Buffer.from(canonicalJson(Object.fromEntries(Object.entries(digest).filter(([key]) => key !== "signature"))), "utf8")

/** The digest signed with `key`, naming it. */
export const signDigest = (digest: LedgerDigest, key: SigningKey): LedgerDigest => {
  const named: LedgerDigest = {
    format: digest.format,
    workspace: digest.workspace,
    schema: digest.schema,
    position: digest.position,
    hash: digest.hash,
    at: digest.at,
    publicKey: key.publicKey
  }
  return { ...named, signature: sign(null, signedBytes(named), key.privateKey).toString("base64") }
}

/** The workspace's head now, as a digest: signed with `key`, unsigned without one. */
export const takeDigest = (workspace: Workspace, key: Option.Option<SigningKey>) =>
  Effect.gen(function* () {
    const head = yield* readHead(workspace)
    const digest = digestOf(workspace, head, new Date(yield* Clock.currentTimeMillis))
    return Option.match(key, { onNone: () => digest, onSome: (signing) => signDigest(digest, signing) })
  })

/**
 * The head now, signed with the service's key (`signingKey`), unsigned
 * where it has none: what `GET /api/audit/digest` answers. A kept key that
 * cannot be read is the server's fault, not the caller's: a defect.
 */
export const serviceDigest = (workspace: Workspace) =>
  Effect.flatMap(Effect.orDie(signingKey), (key) => takeDigest(workspace, key))

/** A digest as one line of a file of digests (NDJSON), its members in the order the docs show them. */
export const digestLine = (digest: LedgerDigest): string =>
  `${JSON.stringify({
    format: digest.format,
    workspace: digest.workspace,
    schema: digest.schema,
    position: digest.position,
    hash: digest.hash,
    at: digest.at,
    publicKey: digest.publicKey,
    signature: digest.signature
  })}\n`

const decodeLine = Schema.decodeUnknownResult(fromJsonText(LedgerDigest), { onExcessProperty: "error" })
const issuesOf = SchemaIssue.makeFormatterStandardSchemaV1()

/** A line as a digest, whatever it claims; none when it is not one. */
export const decodeDigestLine = (line: string): Option.Option<LedgerDigest> => Result.getSuccess(decodeLine(line))

const notADigest = (error: Schema.SchemaError) => {
  const [first] = issuesOf(error.issue).issues
  const where = first?.path === undefined || first.path.length === 0 ? "" : ` (at ${first.path.map(String).join(".")})`
  return `not a digest${where}: ${first?.message ?? "unreadable"}`
}

/**
 * A checker of the lines of a file of digests: each must be a digest of
 * `workspace`, signed by `trusted` (the key in the line must be it: a line
 * naming another key is refused, whatever its signature), its content as
 * signed. The claim, or what is wrong.
 */
const lineChecker = (workspace: Workspace, trusted: KeyObject) => {
  const trustedText = publicKeyText(trusted)
  return (line: string): Result.Result<Omit<DigestClaim, "label">, string> => {
    const decoded = decodeLine(line)
    if (Result.isFailure(decoded)) return Result.fail(notADigest(decoded.failure))
    const digest = decoded.success
    if (digest.workspace !== workspace.slug || digest.schema !== workspace.schema)
      return Result.fail(
        `a digest of workspace ${digest.workspace} (schema ${digest.schema}), not of ${workspace.slug} (schema ${workspace.schema})`
      )
    if (digest.publicKey === undefined || digest.signature === undefined)
      return Result.fail("not signed (no publicKey and signature)")
    if (digest.publicKey !== trustedText)
      return Result.fail(`signed by key ${digest.publicKey}, not by the trusted key ${trustedText}`)
    if (!verify(null, signedBytes(digest), trusted, Buffer.from(digest.signature, "base64")))
      return Result.fail("its signature does not match its content: the line was changed after it was signed")
    return Result.succeed({ position: BigInt(digest.position), hash: Buffer.from(digest.hash, "hex") })
  }
}

/** One line of a file of digests, checked (see `lineChecker`): the claim, or what is wrong. */
export const checkDigestLine = (
  line: string,
  workspace: Workspace,
  trusted: KeyObject
): Result.Result<Omit<DigestClaim, "label">, string> => lineChecker(workspace, trusted)(line)

/**
 * The claims of a file of digests (`text`, read from `file`), one a line,
 * blank lines ignored, each checked as `checkDigestLine` says. The first bad line
 * refuses the whole file, naming the file and the line (and how many more
 * are bad): a verification must not go on with a file someone tampered with.
 */
export const parseDigestFile = (
  text: string,
  file: string,
  workspace: Workspace,
  trusted: KeyObject
): Result.Result<ReadonlyArray<DigestClaim>, BadDigestFile> => {
  const check = lineChecker(workspace, trusted)
  const claims: Array<DigestClaim> = []
  const bad: Array<string> = []
  for (const [index, raw] of text.split("\n").entries()) {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw
    if (line.trim() === "") continue
    const number = index + 1
    const checked = check(line)
    if (Result.isFailure(checked)) bad.push(`${file}, line ${number}: ${checked.failure}`)
    else claims.push({ ...checked.success, label: `the digest on line ${number} of ${file}` })
  }
  const [first] = bad
  if (first === undefined) return Result.succeed(claims)
  const more = bad.length - 1
  return Result.fail(
    new BadDigestFile({ message: more === 0 ? first : `${first} (and ${more} more bad line${more === 1 ? "" : "s"})` })
  )
}

/** Why a file operation failed, in a few words (`ENOENT: no such file or directory`). */
export const fileFailure = (error: unknown): string => {
  const message = Predicate.hasProperty(error, "message") ? String(error.message) : String(error)
  // Node's message ends with the operation and the path (", open '/x'"): the caller names the path itself.
  return message.replace(/, \w+ '.*'$/u, "")
}

/**
 * What `admin audit verify` reads: the digests of `workspace` in the file at
 * `path` (NDJSON, as `admin audit digest --out` and the periodic job write
 * them), each checked against `trusted`. Fails with `BadDigestFile` naming
 * the file (and the line) when it cannot be read or a line is not a good
 * digest of this workspace signed by that key; never throws.
 */
export const readDigestFile = (
  path: string,
  workspace: Workspace,
  trusted: KeyObject
): Effect.Effect<ReadonlyArray<DigestClaim>, BadDigestFile> =>
  Effect.tryPromise({
    try: () => readFile(path, "utf8"),
    catch: (error) => new BadDigestFile({ message: `${path}: cannot be read: ${fileFailure(error)}` })
  }).pipe(Effect.flatMap((text) => Effect.fromResult(parseDigestFile(text, path, workspace, trusted))))
