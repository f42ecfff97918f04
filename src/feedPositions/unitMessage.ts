import { Option } from "effect"

/** The prefix of the service's logical messages: the positioner reads these and no others. */
export const unitMessagePrefix = "abs.feed"

/** What one unit of work's flush tells the positioner: whose rows, and their content hashes in staging order. */
export interface UnitMessage {
  readonly workspaceId: string
  readonly schema: string
  readonly correlationId: string
  /** One 32-byte content hash per row, hex, in the order the rows were staged (their `seq` order). */
  readonly contents: ReadonlyArray<string>
}

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/u
const schemaName = /^ws_[a-z0-9_]{2,40}$/u
const hashes = /^(?:[0-9a-f]{64})+$/u

/**
 * The message's text: `1 <workspace id> <schema> <correlation id> <hashes>`, the hashes one after
 * another as the INSERT's `$3` already has them (version 1; space-separated, since no part holds a space).
 */
export const encodeUnitMessage = (message: Omit<UnitMessage, "contents">, contents: string): string =>
  `1 ${message.workspaceId} ${message.schema} ${message.correlationId} ${contents}`

/**
 * A message's content as the slot delivers it; none when it is not one this
 * version wrote (another version's, or someone else's under the prefix): the
 * positioner skips it and says so.
 */
export const decodeUnitMessage = (content: Uint8Array): Option.Option<UnitMessage> => {
  const parts = Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString("latin1").split(" ")
  if (parts.length !== 5) return Option.none()
  const [version = "", workspaceId = "", schema = "", correlationId = "", contents = ""] = parts
  if (version !== "1" || !uuid.test(workspaceId) || !schemaName.test(schema) || !uuid.test(correlationId)) {
    return Option.none()
  }
  if (!hashes.test(contents)) return Option.none()
  const split: Array<string> = []
  for (let at = 0; at < contents.length; at += 64) split.push(contents.slice(at, at + 64))
  return Option.some({ workspaceId, schema, correlationId, contents: split })
}
