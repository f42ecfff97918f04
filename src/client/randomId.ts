/**
 * `bytes` random bytes in hex, from `crypto.getRandomValues`, which (unlike
 * `crypto.randomUUID`) also exists on a page served over plain HTTP from a
 * host other than localhost. Editor ids and new collection entry ids.
 */
export const randomId = (bytes = 16): string =>
  Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (byte) => byte.toString(16).padStart(2, "0")).join("")
