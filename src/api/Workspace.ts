import { Schema } from "effect"
import { schemaNameOf } from "./WorkspaceSlug"

/** A tenant: its id, its slug and the PostgreSQL schema holding its tables. */
export class Workspace extends Schema.Class<Workspace>("Workspace")({
  id: Schema.String,
  slug: Schema.String,
  name: Schema.String
}) {
  get schema(): string {
    return schemaNameOf(this.slug)
  }
  /** A qualified table name of this workspace, for `sql(...)` to quote. */
  table(name: string): string {
    return `${this.schema}.${name}`
  }
}
