import type { KeyObject } from "node:crypto"
import { createPublicKey, generateKeyPairSync } from "node:crypto"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Effect, Option, Predicate, Redacted, Schema } from "effect"
import { errorFields } from "../api/errors"
import { AppConfig } from "../config/AppConfig"
import type { AppConfigShape } from "../config/AppConfig"
import { ed25519PrivateKeyOf } from "../config/ed25519Keys"

/** Digests cannot be signed: this server has no signing key (`LEDGER_SIGNING_KEY`). */
export class SigningKeyMissing extends Schema.TaggedError<SigningKeyMissing>()("SigningKeyMissing", errorFields, {
  httpApiStatus: 503
}) {}

/** The signing key kept in the data directory cannot be read or made. */
export class SigningKeyUnusable extends Schema.TaggedError<SigningKeyUnusable>()("SigningKeyUnusable", errorFields, {
  httpApiStatus: 500
}) {}

export interface SigningKey {
  readonly privateKey: KeyObject
  /** The public key's SPKI DER in base64: a digest's `publicKey`. */
  readonly publicKey: string
  /** `LEDGER_SIGNING_KEY`, or the key file of the embedded database's data directory (`made`: just now). */
  readonly source:
    | { readonly kind: "configured" }
    | { readonly kind: "data-dir"; readonly path: string; readonly made: boolean }
}

/** A public key (or a private key's public half) as a digest names it: its SPKI DER in base64. */
export const publicKeyText = (key: KeyObject): string =>
  (key.type === "public" ? key : createPublicKey(key)).export({ format: "der", type: "spki" }).toString("base64")

/** Where the embedded database's signing key is kept: next to its data, readable by this OS user only. */
export const signingKeyFile = (dataDir: string) => join(dataDir, "ledger-signing-key.pem")

const isCode = (error: unknown, code: string) => Predicate.hasProperty(error, "code") && error.code === code

const unusable = (path: string, what: string) =>
  new SigningKeyUnusable({ message: `the ledger signing key ${path} ${what}` })

/** The key in `path`, if there is a file. */
const readKeyFile = (path: string): Effect.Effect<Option.Option<KeyObject>, SigningKeyUnusable> =>
  Effect.suspend(() => {
    let text: string
    try {
      text = readFileSync(path, "utf8")
    } catch (error) {
      if (isCode(error, "ENOENT")) return Effect.succeed(Option.none())
      return Effect.fail(unusable(path, `cannot be read: ${String(error)}`))
    }
    return Option.match(ed25519PrivateKeyOf(text), {
      onNone: () => Effect.fail(unusable(path, "is not an Ed25519 private key in PKCS#8 PEM")),
      onSome: (key) => Effect.succeed(Option.some(key))
    })
  })

/** A new key in `path` (mode 0600), unless one is there already (then that one). */
const makeKeyFile = (dataDir: string, path: string): Effect.Effect<SigningKey, SigningKeyUnusable> =>
  Effect.suspend(() => {
    const { privateKey } = generateKeyPairSync("ed25519")
    try {
      mkdirSync(dataDir, { recursive: true })
      writeFileSync(path, privateKey.export({ format: "pem", type: "pkcs8" }), { flag: "wx", mode: 0o600 })
    } catch (error) {
      if (!isCode(error, "EEXIST")) return Effect.fail(unusable(path, `cannot be written: ${String(error)}`))
      return readKeyFile(path).pipe(
        Effect.flatMap(Effect.fromOption),
        Effect.mapError(() => unusable(path, "vanished while it was being made")),
        Effect.map((key) => dataDirKey(key, path, false))
      )
    }
    return Effect.as(
      Effect.logInfo("ledger: made a signing key in the data directory").pipe(Effect.annotateLogs({ path })),
      dataDirKey(privateKey, path, true)
    )
  })

const dataDirKey = (privateKey: KeyObject, path: string, made: boolean): SigningKey => ({
  privateKey,
  publicKey: publicKeyText(privateKey),
  source: { kind: "data-dir", path, made }
})

const isEmbedded = (config: AppConfigShape) => Option.isNone(config.databaseUrl)

/**
 * The key digests are signed with: `LEDGER_SIGNING_KEY`; without it, on the
 * embedded database, the key kept in its data directory, made on first use
 * (so that `admin audit digest` works on a newcomer's machine); otherwise none.
 */
export const signingKey: Effect.Effect<Option.Option<SigningKey>, SigningKeyUnusable, AppConfig> = Effect.gen(
  function* () {
    const config = yield* AppConfig
    if (Option.isSome(config.ledgerSigningKey)) {
      const privateKey = Redacted.value(config.ledgerSigningKey.value)
      return Option.some({ privateKey, publicKey: publicKeyText(privateKey), source: { kind: "configured" } })
    }
    if (!isEmbedded(config)) return Option.none()
    const path = signingKeyFile(config.dataDir)
    const kept = yield* readKeyFile(path)
    if (Option.isSome(kept)) return Option.some(dataDirKey(kept.value, path, false))
    return Option.some(yield* makeKeyFile(config.dataDir, path))
  }
)

/** The signing key, or a refusal naming the variable to set. */
export const requireSigningKey = Effect.flatMap(
  signingKey,
  Option.match({
    onNone: () =>
      Effect.fail(
        new SigningKeyMissing({
          message:
            "no key to sign digests with: set LEDGER_SIGNING_KEY to an Ed25519 private key (PKCS#8 PEM, or its DER " +
            "in base64; `openssl genpkey -algorithm ed25519` makes one)"
        })
      ),
    onSome: Effect.succeed
  })
)

/**
 * The key a file of digests is checked against (`readDigestFile`):
 * `LEDGER_PUBLIC_KEY`; else the signing key's (`LEDGER_SIGNING_KEY`, or the
 * embedded database's kept key when there is one: none is made for this);
 * none: there is nothing to trust.
 */
export const trustedPublicKey: Effect.Effect<Option.Option<KeyObject>, SigningKeyUnusable, AppConfig> = Effect.gen(
  function* () {
    const config = yield* AppConfig
    if (Option.isSome(config.ledgerPublicKey)) return config.ledgerPublicKey
    if (Option.isSome(config.ledgerSigningKey))
      return Option.some(createPublicKey(Redacted.value(config.ledgerSigningKey.value)))
    if (!isEmbedded(config)) return Option.none()
    return Option.map(yield* readKeyFile(signingKeyFile(config.dataDir)), (key) => createPublicKey(key))
  }
)
