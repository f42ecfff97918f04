import { createHash, randomBytes } from "node:crypto"

/** 256 random bits, URL-safe: session tokens and API key secrets. */
export const randomToken = (): string => randomBytes(32).toString("base64url")

/**
 * Tokens are random and long, so a fast hash is enough to keep them out of
 * the database while still finding a row by its hash (no salt needed).
 */
export const hashToken = (token: string): string => createHash("sha256").update(token).digest("hex")
