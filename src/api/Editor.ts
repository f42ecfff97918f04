import { Schema } from "effect"

/**
 * One open form as the presence list shows it (decisions.md: `{id, name}`),
 * and the user holding it: a page tells the person's own other devices
 * ("you, on another device") from other people by it.
 */
export class Editor extends Schema.Class<Editor>("Editor")({
  id: Schema.String,
  name: Schema.String,
  userId: Schema.String
}) {}

/** `GET /api/presence/:ns/:name`: live editors grouped by record id. */
export class PresenceList extends Schema.Class<PresenceList>("PresenceList")({
  records: Schema.Record(Schema.String, Schema.Array(Editor))
}) {}

/** An editor id is made by the form when it mounts: short, URL-safe. */
export const EditorId = Schema.String.check(
  Schema.isPattern(/^[A-Za-z0-9_-]{1,100}$/u, {
    message: "an editor id is 1-100 letters, digits, '-' or '_'"
  })
)
