import { generateKeyPairSync } from "node:crypto"
import type { KeyObject } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it, layer } from "@effect/vitest"
import { SqlClient } from "effect/sql"
import { ConfigProvider, Effect, Exit, Option, Redacted, Result } from "effect"
import { Workspace } from "../../src/api/Workspace"
import { appConfig, AppConfig } from "../../src/config/AppConfig"
import { configErrorLines } from "../../src/config/configErrorLines"
import { withActor } from "../../src/context/Frames"
import { appendDigest } from "../../src/ledger/digestFiles"
import { digestLine, digestOf, parseDigestFile, readDigestFile, signDigest, takeDigest } from "../../src/ledger/Digests"
import type { SigningKey } from "../../src/ledger/LedgerKeys"
import {
  publicKeyText,
  requireSigningKey,
  signingKey,
  signingKeyFile,
  trustedPublicKey
} from "../../src/ledger/LedgerKeys"
import { readHead } from "../../src/ledger/LedgerRows"
import { verificationPassed, verifyLedger } from "../../src/ledger/Verification"
import { Records } from "../../src/records/Records"
import { DurableQueuesLive } from "../../src/queue/DurableQueues"
import { queueTable } from "../../src/tenancy/migrations/durableQueue"
import { UnitOfWork } from "../../src/unitOfWork/UnitOfWork"
import { makeDigestRounds } from "../../src/workers/LedgerDigester"
import { digestFileOf, digestRound } from "../../src/workers/ledgerDigestRound"
import { freshWorkspace, testServices } from "../support/TestApp"

const someone = { kind: "user", id: "u-digest", name: "Digest", email: "digest@example.com" } as const

const keyPair = () => generateKeyPairSync("ed25519")

const signingKeyOf = (privateKey: KeyObject): SigningKey => ({
  privateKey,
  publicKey: publicKeyText(privateKey),
  source: { kind: "configured" }
})

const acme = new Workspace({ id: "00000000-0000-0000-0000-000000000001", slug: "acme", name: "Acme" })

const head = (position: number) => ({ position: String(position), hash: String(position % 10).repeat(64) })

/** A file of three digests of acme, signed with `key`, a blank line between the first two. */
const threeDigests = (key: SigningKey) =>
  [1, 5, 9]
    .map((position) => digestLine(signDigest(digestOf(acme, head(position), new Date(position * 1000)), key)))
    .join("")
    .replace("\n", "\n\n")

const lines = (text: string) => text.split("\n")

const refusal = <A>(result: Result.Result<A, { readonly message: string }>) =>
  Result.isFailure(result) ? result.failure.message : "accepted"

const scratch = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "digests-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

describe("the digest format", () => {
  it("signed and parsed back: one claim per line, blank lines ignored, labelled with their line", () => {
    const { privateKey, publicKey } = keyPair()
    const text = threeDigests(signingKeyOf(privateKey))
    const parsed = parseDigestFile(text, "acme.digests", acme, publicKey)
    expect(Result.isSuccess(parsed)).toBe(true)
    const claims = Result.getOrThrow(parsed)
    expect(claims.map((claim) => [claim.position, Buffer.from(claim.hash).toString("hex"), claim.label])).toEqual([
      [1n, "1".repeat(64), "the digest on line 1 of acme.digests"],
      [5n, "5".repeat(64), "the digest on line 3 of acme.digests"],
      [9n, "9".repeat(64), "the digest on line 4 of acme.digests"]
    ])
    // The line as documented: the format's members in order, then the key and the signature.
    expect(Object.keys(JSON.parse(lines(text)[0] ?? ""))).toEqual([
      "format",
      "workspace",
      "schema",
      "position",
      "hash",
      "at",
      "publicKey",
      "signature"
    ])
  })

  it("a line changed after signing (hash, position, time or signature) is refused, naming the file and line", () => {
    const { privateKey, publicKey } = keyPair()
    const text = threeDigests(signingKeyOf(privateKey))
    const changeLine = (number: number, change: (digest: Record<string, unknown>) => Record<string, unknown>) =>
      lines(text)
        .map((line, index) => (index + 1 === number ? JSON.stringify(change(JSON.parse(line))) : line))
        .join("\n")
    const tampered = {
      hash: changeLine(3, (d) => ({ ...d, hash: "a".repeat(64) })),
      position: changeLine(4, (d) => ({ ...d, position: "10" })),
      at: changeLine(1, (d) => ({ ...d, at: "2001-01-01T00:00:00.000Z" })),
      signature: changeLine(3, (d) => ({ ...d, signature: `${"A".repeat(86)}==` }))
    }
    const changed = "its signature does not match its content: the line was changed after it was signed"
    expect(refusal(parseDigestFile(tampered.hash, "f.digests", acme, publicKey))).toBe(`f.digests, line 3: ${changed}`)
    expect(refusal(parseDigestFile(tampered.position, "f.digests", acme, publicKey))).toBe(
      `f.digests, line 4: ${changed}`
    )
    expect(refusal(parseDigestFile(tampered.at, "f.digests", acme, publicKey))).toBe(`f.digests, line 1: ${changed}`)
    expect(refusal(parseDigestFile(tampered.signature, "f.digests", acme, publicKey))).toBe(
      `f.digests, line 3: ${changed}`
    )
  })

  it("another key than the trusted one, another workspace, an unsigned or malformed line: refused with its line", () => {
    const signer = keyPair()
    const other = keyPair()
    const text = threeDigests(signingKeyOf(signer.privateKey))
    expect(refusal(parseDigestFile(text, "f", acme, other.publicKey))).toBe(
      `f, line 1: signed by key ${publicKeyText(signer.publicKey)}, not by the trusted key ${publicKeyText(other.publicKey)} (and 2 more bad lines)`
    )
    // Signed by another key that claims to be the trusted one: the signature gives it away.
    const impostor = { ...signingKeyOf(other.privateKey), publicKey: publicKeyText(signer.publicKey) }
    const forged = digestLine(signDigest(digestOf(acme, head(3), new Date(0)), impostor))
    expect(refusal(parseDigestFile(forged, "f", acme, signer.publicKey))).toMatch(
      /^f, line 1: its signature does not match its content/
    )
    const elsewhere = new Workspace({ id: "x", slug: "globex", name: "Globex" })
    expect(refusal(parseDigestFile(text, "f", elsewhere, signer.publicKey))).toBe(
      "f, line 1: a digest of workspace acme (schema ws_acme), not of globex (schema ws_globex) (and 2 more bad lines)"
    )
    const unsigned = digestLine(digestOf(acme, head(2), new Date(0)))
    expect(refusal(parseDigestFile(`\n${unsigned}`, "f", acme, signer.publicKey))).toBe(
      "f, line 2: not signed (no publicKey and signature)"
    )
    expect(refusal(parseDigestFile("{not json\n", "f", acme, signer.publicKey))).toMatch(/^f, line 1: not a digest: /)
    const extra = JSON.stringify({ ...JSON.parse(lines(text)[0] ?? ""), note: "hi" })
    expect(refusal(parseDigestFile(extra, "f", acme, signer.publicKey))).toMatch(/^f, line 1: not a digest \(at note\)/)
    const badHash = JSON.stringify({ ...JSON.parse(lines(text)[0] ?? ""), hash: "XYZ" })
    expect(refusal(parseDigestFile(badHash, "f", acme, signer.publicKey))).toBe(
      "f, line 1: not a digest (at hash): a hash is 64 lower-case hex digits"
    )
    expect(Result.getOrThrow(parseDigestFile("\n \n", "f", acme, signer.publicKey))).toEqual([])
  })

  it.effect("readDigestFile: a file that cannot be read is an error naming it, not an exception", () =>
    Effect.gen(function* () {
      const { publicKey } = keyPair()
      const dir = yield* scratch
      const missing = join(dir, "none.digests")
      const error = yield* Effect.flip(readDigestFile(missing, acme, publicKey))
      expect(error._tag).toBe("BadDigestFile")
      expect(error.message).toBe(`${missing}: cannot be read: ENOENT: no such file or directory`)
    })
  )
})

const withEnv = (env: Record<string, string>) =>
  Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))

describe("the signing key's configuration", () => {
  it.effect("LEDGER_SIGNING_KEY as PEM, PEM with \\n escapes, or DER in base64; LEDGER_PUBLIC_KEY likewise", () =>
    Effect.gen(function* () {
      const { privateKey, publicKey } = keyPair()
      const pem = privateKey.export({ format: "pem", type: "pkcs8" }).toString()
      const forms = [
        pem,
        pem.replaceAll("\n", "\\n"),
        privateKey.export({ format: "der", type: "pkcs8" }).toString("base64")
      ]
      for (const form of forms) {
        const config = yield* withEnv({ LEDGER_SIGNING_KEY: form })(appConfig)
        const read = Option.map(config.ledgerSigningKey, Redacted.value)
        expect(Option.map(read, (key) => key.equals(privateKey))).toEqual(Option.some(true))
      }
      const publicDer = publicKey.export({ format: "der", type: "spki" }).toString("base64")
      const verifying = yield* withEnv({ LEDGER_PUBLIC_KEY: publicDer })(appConfig)
      expect(Option.map(verifying.ledgerPublicKey, (key) => key.equals(publicKey))).toEqual(Option.some(true))
    })
  )

  it.effect("a wrong key is one line naming its variable, never printing the value; a mismatched pair is refused", () =>
    Effect.gen(function* () {
      const { privateKey } = keyPair()
      const other = keyPair()
      const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey.export({
        format: "pem",
        type: "pkcs8"
      })
      const secret = "not-a-key-but-secret"
      const wrong = yield* Effect.flip(
        withEnv({ LEDGER_SIGNING_KEY: secret, LEDGER_PUBLIC_KEY: "junk", LEDGER_DIGEST_INTERVAL: "5 seconds" })(
          appConfig
        )
      )
      expect(configErrorLines(wrong)).toEqual([
        "LEDGER_SIGNING_KEY: must be an Ed25519 private key: PKCS#8 PEM, or its DER in base64 (openssl genpkey -algorithm ed25519)",
        "LEDGER_PUBLIC_KEY: must be an Ed25519 public key: SPKI PEM, or its DER in base64",
        "LEDGER_DIGEST_INTERVAL: must be between 1 minute and 7 days"
      ])
      expect(JSON.stringify(configErrorLines(wrong))).not.toContain(secret)
      const notEd25519 = yield* Effect.flip(withEnv({ LEDGER_SIGNING_KEY: rsa.toString() })(appConfig))
      expect(configErrorLines(notEd25519)[0]).toMatch(/^LEDGER_SIGNING_KEY: must be an Ed25519 private key/)
      const mismatched = yield* Effect.flip(
        withEnv({
          LEDGER_SIGNING_KEY: privateKey.export({ format: "pem", type: "pkcs8" }).toString(),
          LEDGER_PUBLIC_KEY: other.publicKey.export({ format: "pem", type: "spki" }).toString()
        })(appConfig)
      )
      expect(configErrorLines(mismatched)).toEqual(["LEDGER_PUBLIC_KEY is not the public key of LEDGER_SIGNING_KEY"])
    })
  )

  it.effect(
    "embedded mode without a key: one is made in the data directory (0600) on first use and kept; server mode refuses",
    () =>
      Effect.gen(function* () {
        const dataDir = join(yield* scratch, "pglite")
        const embedded = AppConfig.make({ databaseUrl: Option.none(), dataDir, ledgerSigningKey: Option.none() })
        expect(Option.isNone(yield* trustedPublicKey.pipe(Effect.provide(embedded)))).toBe(true)
        const made = yield* requireSigningKey.pipe(Effect.provide(embedded))
        const path = signingKeyFile(dataDir)
        expect(made.source).toEqual({ kind: "data-dir", path, made: true })
        expect(statSync(path).mode & 0o777).toBe(0o600)
        const kept = yield* requireSigningKey.pipe(Effect.provide(embedded))
        expect(kept.source).toEqual({ kind: "data-dir", path, made: false })
        expect(kept.publicKey).toBe(made.publicKey)
        const trusted = yield* trustedPublicKey.pipe(Effect.provide(embedded))
        expect(Option.map(trusted, publicKeyText)).toEqual(Option.some(made.publicKey))

        const server = AppConfig.make({
          databaseUrl: Option.some(Redacted.make("postgres://x@127.0.0.1/db")),
          dataDir: join(dataDir, "unused"),
          ledgerSigningKey: Option.none(),
          ledgerPublicKey: Option.none()
        })
        expect(Option.isNone(yield* signingKey.pipe(Effect.provide(server)))).toBe(true)
        const refused = yield* Effect.flip(requireSigningKey.pipe(Effect.provide(server)))
        expect(refused._tag).toBe("SigningKeyMissing")
        expect(refused.message).toMatch(
          /^no key to sign digests with: set LEDGER_SIGNING_KEY to an Ed25519 private key/
        )

        writeFileSync(path, "garbage")
        const broken = yield* Effect.exit(requireSigningKey.pipe(Effect.provide(embedded)))
        expect(Exit.isFailure(broken) && JSON.stringify(broken.cause)).toContain("is not an Ed25519 private key")
      })
  )
})

const signer = keyPair()
const Services = testServices({ ledgerSigningKey: Option.some(Redacted.make(signer.privateKey)) })

/** `n` companies created in `workspace`, one unit of work each. */
const writeRows = (workspace: Workspace, n: number) =>
  Effect.gen(function* () {
    const records = yield* Records
    const units = yield* UnitOfWork
    for (let i = 0; i < n; i++) yield* units.run(workspace, records.create("crm/company", { name: `Company ${i}` }))
  }).pipe(withActor(someone))

const fileLines = (path: string) =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line !== "")

layer(Services, { excludeTestServices: true })("digests of a workspace's ledger", (it) => {
  it.effect("a digest is the head; the file of digests passes verification, and pins the chain as it goes on", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      yield* writeRows(workspace, 3)
      const dir = yield* scratch
      const path = join(dir, "acme.digests")
      const first = yield* takeDigest(workspace, Option.some(signingKeyOf(signer.privateKey)))
      const head = yield* readHead(workspace)
      expect(first).toMatchObject({ workspace: workspace.slug, schema: workspace.schema, position: head.position })
      expect(first.hash).toBe(head.hash)
      yield* appendDigest(path, first)
      yield* writeRows(workspace, 2)
      yield* appendDigest(path, yield* takeDigest(workspace, Option.some(signingKeyOf(signer.privateKey))))
      expect(statSync(path).mode & 0o777).toBe(0o600)
      const claims = yield* readDigestFile(path, workspace, signer.publicKey)
      expect(claims.map((claim) => claim.position)).toEqual([BigInt(head.position), BigInt(head.position) + 2n])
      const report = yield* verifyLedger(workspace, claims)
      expect(verificationPassed(report)).toBe(true)
      const unsigned = yield* takeDigest(workspace, Option.none())
      expect(Object.keys(unsigned)).not.toContain("signature")
    })
  )

  it.effect("a round of the periodic job: one digest per workspace whose head moved, none for the others", () =>
    Effect.gen(function* () {
      const moving = yield* freshWorkspace
      const still = yield* freshWorkspace
      const empty = yield* freshWorkspace
      yield* writeRows(moving, 2)
      yield* writeRows(still, 1)
      const dir = yield* scratch
      const first = yield* digestRound(dir)
      expect(first.written).toBeGreaterThanOrEqual(2)
      expect(fileLines(digestFileOf(dir, moving))).toHaveLength(1)
      expect(fileLines(digestFileOf(dir, still))).toHaveLength(1)
      // A ledger without rows has nothing to pin.
      expect(() => statSync(digestFileOf(dir, empty))).toThrow()

      yield* writeRows(moving, 1)
      yield* digestRound(dir)
      expect(fileLines(digestFileOf(dir, moving))).toHaveLength(2)
      expect(fileLines(digestFileOf(dir, still))).toHaveLength(1)
      expect(statSync(digestFileOf(dir, moving)).mode & 0o777).toBe(0o600)

      const claims = yield* readDigestFile(digestFileOf(dir, moving), moving, signer.publicKey)
      expect(claims.at(-1)?.position).toBe(BigInt((yield* readHead(moving)).position))
      expect(verificationPassed(yield* verifyLedger(moving, claims))).toBe(true)
    })
  )

  it.effect("two instances offering the same interval's round: it runs once, on one of them", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      yield* writeRows(workspace, 1)
      const dir = yield* scratch
      const config = yield* AppConfig
      const instanceA = yield* makeDigestRounds
      const instanceB = yield* makeDigestRounds
      const sql = (yield* SqlClient.SqlClient).withoutTransforms()
      const queue = `${config.queuePrefix}:ledger-digests`
      yield* Effect.addFinalizer(() =>
        sql`DELETE FROM ${sql(queueTable)} WHERE queue_name = ${queue}`.pipe(Effect.orDie)
      )
      const slot = 424_242
      yield* instanceA.offer(slot)
      yield* instanceB.offer(slot)
      yield* instanceB.takeOne(dir)
      const rounds = yield* sql<{ state: string }>`SELECT state FROM ${sql(queueTable)} WHERE queue_name = ${queue}`
      expect(rounds.map((round) => round.state)).toEqual(["completed"])
      expect(fileLines(digestFileOf(dir, workspace))).toHaveLength(1)
    }).pipe(Effect.provide(DurableQueuesLive))
  )
})
