import type { KeyObject } from "node:crypto"
import { createPrivateKey, createPublicKey } from "node:crypto"
import { Option } from "effect"

/**
 * A key as an environment variable holds it: PEM (its line breaks may be
 * written `\n`, as many secret stores and `.env` files need), or the DER
 * alone in base64 (one line). Undefined: neither.
 */
const keyText = (text: string): { readonly pem: string } | { readonly der: Buffer } | undefined => {
  const trimmed = text.trim()
  if (trimmed.startsWith("-----BEGIN")) return { pem: trimmed.replaceAll("\\n", "\n") }
  const base64 = trimmed.replace(/\s+/g, "")
  return /^[A-Za-z0-9+/]+={0,2}$/.test(base64) ? { der: Buffer.from(base64, "base64") } : undefined
}

const ed25519 = (make: () => KeyObject | undefined): Option.Option<KeyObject> => {
  try {
    const key = make()
    return key?.asymmetricKeyType === "ed25519" ? Option.some(key) : Option.none()
  } catch {
    // Not a key, an encrypted one (it needs a passphrase), or one of another kind.
    return Option.none()
  }
}

/** An Ed25519 private key from PKCS#8 PEM or its DER in base64; none for anything else. */
export const ed25519PrivateKeyOf = (text: string): Option.Option<KeyObject> =>
  ed25519(() => {
    const input = keyText(text)
    if (input === undefined) return undefined
    return "pem" in input
      ? createPrivateKey(input.pem)
      : createPrivateKey({ key: input.der, format: "der", type: "pkcs8" })
  })

/** An Ed25519 public key from SPKI PEM or its DER in base64; none for anything else. */
export const ed25519PublicKeyOf = (text: string): Option.Option<KeyObject> =>
  ed25519(() => {
    const input = keyText(text)
    if (input === undefined) return undefined
    const key =
      "pem" in input ? createPublicKey(input.pem) : createPublicKey({ key: input.der, format: "der", type: "spki" })
    // A private key's PEM is taken by createPublicKey too (it derives the public half): not what was asked for.
    return key.type === "public" && !("pem" in input && /PRIVATE KEY/.test(input.pem)) ? key : undefined
  })

/** Whether `publicKey` is the public half of `privateKey`. */
export const isPublicKeyOf = (publicKey: KeyObject, privateKey: KeyObject): boolean =>
  createPublicKey(privateKey).equals(publicKey)
