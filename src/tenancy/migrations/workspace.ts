import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { SchemaMigration } from "../Migrations"

/** Every workspace schema's tables. New migrations are appended, never edited. */
export const workspaceMigrations: Record<string, SchemaMigration> = {
  "0001_access": (schema) =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const t = (name: string) => sql(`${schema}.${name}`)
      yield* sql`CREATE TABLE ${t("roles")} (
        name text PRIMARY KEY,
        created_at timestamptz NOT NULL DEFAULT now()
      )`
      yield* sql`CREATE TABLE ${t("role_grants")} (
        role text NOT NULL REFERENCES ${t("roles")} ON DELETE CASCADE,
        business_object text NOT NULL,
        permission text NOT NULL CHECK (permission IN ('read', 'update')),
        PRIMARY KEY (role, business_object, permission)
      )`
      yield* sql`CREATE TABLE ${t("role_assignments")} (
        principal_kind text NOT NULL CHECK (principal_kind IN ('user', 'service-account', 'agent')),
        principal_id text NOT NULL,
        role text NOT NULL REFERENCES ${t("roles")} ON DELETE CASCADE,
        PRIMARY KEY (principal_kind, principal_id, role)
      )`
      yield* sql`CREATE TABLE ${t("api_keys")} (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name text NOT NULL,
        key_hash text NOT NULL UNIQUE,
        created_at timestamptz NOT NULL DEFAULT now(),
        revoked_at timestamptz
      )`
      // The built-in admin role holds every grant: "*" stands for every business object.
      yield* sql`INSERT INTO ${t("roles")} (name) VALUES ('admin')`
      yield* sql`INSERT INTO ${t("role_grants")} (role, business_object, permission)
        VALUES ('admin', '*', 'read'), ('admin', '*', 'update')`
    })
}
