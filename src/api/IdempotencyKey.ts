import { Schema } from "effect"

/**
 * A caller's name for one logical write: 1-255 printable ASCII characters
 * (space to `~`), so it fits any proxy and log line. Anything else is a 400.
 */
export const IdempotencyKey = Schema.String.check(
  Schema.isPattern(/^[\x20-\x7E]{1,255}$/u, {
    message: "the Idempotency-Key header is 1-255 printable ASCII characters"
  })
).annotate({
  identifier: "IdempotencyKey",
  description:
    "Makes a retried write safe: the first request with this key runs, a retry with the same key and the same " +
    "request answers the first answer again (with `Idempotency-Replayed: true`) without running anything; the same " +
    "key with another body or on another route is a 422. Keys are per caller and kept for IDEMPOTENCY_KEY_TTL (24 hours)."
})

/** The headers every write route accepts (lower case: that is how HttpApi matches them). */
export const WriteHeaders = Schema.Struct({
  "idempotency-key": Schema.optionalKey(IdempotencyKey)
})

/** Set on an answer that is the stored first answer of an earlier request with the same key. */
export const replayedHeader = "idempotency-replayed"
