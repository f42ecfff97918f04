import { open } from "node:fs/promises"
import { Effect, Option, Predicate } from "effect"
import type { LedgerDigest } from "../api/AuditApi"
import { BadRequest } from "../api/errors"
import { decodeDigestLine, digestLine, fileFailure } from "./Digests"

/**
 * Appends `digest` as one line to the file at `path`, made readable and
 * writable by this OS user only (mode 0600) when it is new. One write in
 * append mode, so writers appending at once never interleave their lines;
 * after a last line left without its newline (a write cut short) the digest
 * starts a line of its own, and the verifier names the cut one.
 */
export const appendDigest = (path: string, digest: LedgerDigest): Effect.Effect<void, BadRequest> =>
  Effect.tryPromise({
    try: async () => {
      const file = await open(path, "a+", 0o600)
      try {
        const { size } = await file.stat()
        const last = Buffer.alloc(1)
        if (size > 0) await file.read(last, 0, 1, size - 1)
        await file.write(`${size > 0 && last[0] !== 10 ? "\n" : ""}${digestLine(digest)}`)
      } finally {
        await file.close()
      }
    },
    catch: (error) => new BadRequest({ message: `cannot append to ${path}: ${fileFailure(error)}` })
  })

/** How much of a file's end is read for its last line: many times the longest digest line. */
const tailBytes = 4096

/**
 * The last digest in the file at `path`: none when there is no file, no
 * line, or its last line is not a digest. Reads only the file's end.
 */
export const lastDigestIn = (path: string): Effect.Effect<Option.Option<LedgerDigest>, BadRequest> =>
  Effect.tryPromise({
    try: async () => {
      let file: Awaited<ReturnType<typeof open>>
      try {
        file = await open(path, "r")
      } catch (error) {
        if (Predicate.hasProperty(error, "code") && error.code === "ENOENT") return Option.none<LedgerDigest>()
        throw error
      }
      try {
        const { size } = await file.stat()
        const length = Math.min(size, tailBytes)
        const tail = Buffer.alloc(length)
        await file.read(tail, 0, length, size - length)
        const last = tail
          .toString("utf8")
          .split("\n")
          .findLast((line) => line.trim() !== "")
        return last === undefined ? Option.none<LedgerDigest>() : decodeDigestLine(last.trim())
      } finally {
        await file.close()
      }
    },
    catch: (error) => new BadRequest({ message: `cannot read ${path}: ${fileFailure(error)}` })
  })
