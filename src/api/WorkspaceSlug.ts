import { Schema } from "effect"

/**
 * A workspace slug: lower-case letters, digits and single hyphens, starting
 * with a letter. Underscores are refused so that `ws_<slug>` with hyphens
 * turned into underscores can never name two workspaces alike.
 */
export const WorkspaceSlug = Schema.String.pipe(
  Schema.check(
    Schema.isPattern(/^[a-z](?:[a-z0-9]|-(?=[a-z0-9])){1,39}$/u, {
      message: "a workspace slug is 2-40 lower-case letters, digits and single hyphens, starting with a letter"
    })
  ),
  Schema.brand("WorkspaceSlug")
)
export type WorkspaceSlug = typeof WorkspaceSlug.Type

/** What every workspace's schema name starts with, and no other schema's. */
export const workspaceSchemaPrefix = "ws_"

/** The PostgreSQL schema that holds one workspace's tables. */
export const schemaNameOf = (slug: string): string => `${workspaceSchemaPrefix}${slug.replace(/-/g, "_")}`
