import { SqlClient } from "effect/sql"
import { Effect } from "effect"
import { createQueueTable, queueIdIndexOnQueueName } from "./durableQueue"
import type { SchemaMigration } from "../Migrations"

/** The shared schema: workspaces, users, memberships and sessions. */
export const platformSchema = "platform"

export const platformMigrations: Record<string, SchemaMigration> = {
  "0001_accounts": (schema) =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const t = (name: string) => sql(`${schema}.${name}`)
      yield* sql`CREATE TABLE ${t("workspaces")} (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        slug text NOT NULL UNIQUE,
        name text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`
      yield* sql`CREATE TABLE ${t("users")} (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        email text NOT NULL UNIQUE,
        name text NOT NULL,
        password_hash text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`
      yield* sql`CREATE TABLE ${t("memberships")} (
        workspace_id uuid NOT NULL REFERENCES ${t("workspaces")} ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES ${t("users")} ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (workspace_id, user_id)
      )`
      yield* sql`CREATE TABLE ${t("sessions")} (
        token_hash text PRIMARY KEY,
        user_id uuid NOT NULL REFERENCES ${t("users")} ON DELETE CASCADE,
        workspace_id uuid NOT NULL REFERENCES ${t("workspaces")} ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL
      )`
      yield* sql`CREATE INDEX ON ${t("sessions")} (expires_at)`
    }),
  "0002_durable_queue": () => createQueueTable,
  "0003_durable_queue_effect4": () => queueIdIndexOnQueueName
}
