import { createHash } from "node:crypto"
import { SqlClient } from "effect/sql"
import { Effect } from "effect"
import type { SchemaMigration } from "../Migrations"
import { feedPositionsFromWalMigration } from "./feedPositionsFromWal"
import { ledgerMigration } from "./ledger"

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
    }),
  "0002_records_and_audit": (schema) =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const t = (name: string) => sql(`${schema}.${name}`)
      yield* sql`CREATE TABLE ${t("records")} (
        business_object text NOT NULL,
        id uuid NOT NULL,
        state text NOT NULL CHECK (state IN ('draft', 'operational', 'archived')),
        values jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (business_object, id)
      )`
      yield* sql`CREATE INDEX ON ${t("records")} (business_object, created_at DESC, id)`
      // seq breaks ties between rows of one transaction (same at) in staging order.
      yield* sql`CREATE TABLE ${t("audit_entries")} (
        seq bigint GENERATED ALWAYS AS IDENTITY,
        id uuid PRIMARY KEY,
        at timestamptz NOT NULL DEFAULT now(),
        actor jsonb NOT NULL,
        correlation_id uuid NOT NULL,
        business_object text NOT NULL,
        business_object_id text NOT NULL,
        operation text NOT NULL CHECK (operation IN ('created', 'updated', 'deleted', 'archived', 'restored')),
        cause jsonb,
        record jsonb,
        changes jsonb,
        CHECK ((operation IN ('created', 'deleted')) = (record IS NOT NULL)),
        CHECK ((operation = 'updated') = (changes IS NOT NULL))
      )`
      // Every timeline page is one range scan of this index, already in order.
      yield* sql`CREATE INDEX audit_entries_timeline ON ${t("audit_entries")}
        (business_object, business_object_id, at DESC, seq DESC)`
      // Audit rows are permanent: no UPDATE, no DELETE (dropping the whole schema still works).
      yield* sql`CREATE FUNCTION ${t("audit_entries_are_permanent")}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'audit entries are permanent'; END $$`
      yield* sql`CREATE TRIGGER audit_entries_are_permanent BEFORE UPDATE OR DELETE OR TRUNCATE ON ${t("audit_entries")}
        FOR EACH STATEMENT EXECUTE FUNCTION ${t("audit_entries_are_permanent")}()`
    }),
  "0003_agents_seeds_and_runs": (schema) =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const t = (name: string) => sql(`${schema}.${name}`)
      // An agent is a principal of its own: it holds roles under its id and signs in with its own keys.
      yield* sql`CREATE TABLE ${t("agents")} (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`
      yield* sql`ALTER TABLE ${t("api_keys")} ADD COLUMN agent_id uuid REFERENCES ${t("agents")} ON DELETE CASCADE`
      // Each plugin seed item is written once: re-seeding skips what is here.
      yield* sql`CREATE TABLE ${t("plugin_seeds")} (
        plugin text NOT NULL,
        key text NOT NULL,
        business_object text NOT NULL,
        record_id uuid NOT NULL,
        seeded_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (plugin, key)
      )`
      // A job or workflow run commits its mark here with its writes: a redelivered run finds it and does nothing.
      yield* sql`CREATE TABLE ${t("completed_runs")} (
        id uuid PRIMARY KEY,
        kind text NOT NULL CHECK (kind IN ('job', 'workflow')),
        name text NOT NULL,
        completed_at timestamptz NOT NULL DEFAULT now()
      )`
    }),
  "0004_timeline_commit_order": (schema) =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const t = (name: string) => sql(`${schema}.${name}`)
      // A timeline is each record's commit order, which is seq order (docs/audit.md, "Order"). That
      // needs seq values handed out in the order of the nextval calls: no per-session cache.
      yield* sql`ALTER TABLE ${t("audit_entries")} ALTER COLUMN seq SET CACHE 1`
      yield* sql`DROP INDEX ${t("audit_entries_timeline")}`
      // Every timeline page is one range scan of this index, already in order.
      yield* sql`CREATE INDEX audit_entries_timeline ON ${t("audit_entries")}
        (business_object, business_object_id, seq DESC)`
    }),
  "0005_idempotency_keys": (schema) =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const t = (name: string) => sql(`${schema}.${name}`)
      // A caller's key is claimed by the first statement of the write's unit; status and response are
      // filled in by its last. Both commit or roll back with the write.
      yield* sql`CREATE TABLE ${t("idempotency_keys")} (
        principal text NOT NULL,
        key text NOT NULL,
        method text NOT NULL,
        path text NOT NULL,
        request_hash text NOT NULL,
        status integer,
        response text,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (principal, key)
      )`
      yield* sql`CREATE INDEX idempotency_keys_created_at ON ${t("idempotency_keys")} (created_at)`
    }),
  "0006_record_versions": (schema) =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const t = (name: string) => sql(`${schema}.${name}`)
      // Every write that changes a record adds one (docs/writes.md, "Versions"); records already here start at 1.
      yield* sql`ALTER TABLE ${t("records")} ADD COLUMN version bigint NOT NULL DEFAULT 1`
      // The version the entry's write gave its record: "the entries since version v" are the newest rows above v.
      // NULL on rows written before versions existed (they are older than any version a caller can name).
      yield* sql`ALTER TABLE ${t("audit_entries")} ADD COLUMN record_version bigint`
    }),
  "0007_idempotent_answer_headers": (schema) =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const t = (name: string) => sql(`${schema}.${name}`)
      // The headers of the first answer (its ETag) that a replay sends again; NULL: none.
      yield* sql`ALTER TABLE ${t("idempotency_keys")} ADD COLUMN headers jsonb`
    }),
  "0008_feed_positions": (schema) =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const t = (name: string) => sql(`${schema}.${name}`)
      // The workspace's feed order is its commit order (docs/feed.md, "Order"): each unit's flush takes the
      // next positions from this one row, whose lock it holds until COMMIT.
      yield* sql`CREATE TABLE ${t("feed_position")} (
        only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
        position bigint NOT NULL
      )`
      yield* sql`ALTER TABLE ${t("audit_entries")} ADD COLUMN position bigint`
      // The unit whose job or workflow run wrote the row (its parent in the cascade); NULL: a unit of its own.
      yield* sql`ALTER TABLE ${t("audit_entries")} ADD COLUMN parent_correlation_id uuid`
      // Rows already here are committed: their seq order keeps every record's commit order, so it is their feed order.
      yield* sql`ALTER TABLE ${t("audit_entries")} DISABLE TRIGGER audit_entries_are_permanent`
      yield* sql`UPDATE ${t("audit_entries")} SET position = seq`
      yield* sql`ALTER TABLE ${t("audit_entries")} ENABLE TRIGGER audit_entries_are_permanent`
      yield* sql`INSERT INTO ${t("feed_position")} (position) SELECT coalesce(max(seq), 0) FROM ${t("audit_entries")}`
      yield* sql`ALTER TABLE ${t("audit_entries")} ALTER COLUMN position SET NOT NULL`
      yield* sql`CREATE UNIQUE INDEX audit_entries_feed ON ${t("audit_entries")} (position)`
      yield* sql`CREATE INDEX audit_entries_correlation ON ${t("audit_entries")} (correlation_id, position)`
      yield* sql`CREATE INDEX audit_entries_parent_correlation ON ${t("audit_entries")} (parent_correlation_id)
        WHERE parent_correlation_id IS NOT NULL`
      // The service's flush sets the position itself (one UPDATE per unit). Any other INSERT (by hand, a bulk
      // load) gets its positions here, under the same lock: no row is ever left out of the feed. Per row, the
      // counter is only locked and read (updating one row once per inserted row would pile up its versions in
      // the transaction: quadratic); the row's position is kept in a transaction-local setting, and the counter
      // is written once per statement, after it.
      const counter = sql.literal(`${schema}.feed_position`)
      const setting = `abs.feed_${createHash("md5").update(schema).digest("hex")}`
      yield* sql`CREATE FUNCTION ${t("audit_entries_feed_position")}() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
          stored bigint;
        BEGIN
          SELECT position INTO stored FROM ${counter} FOR UPDATE;
          NEW.position := greatest(stored, coalesce(nullif(current_setting(${sql.literal(`'${setting}'`)}, true), '')::bigint, 0)) + 1;
          PERFORM set_config(${sql.literal(`'${setting}'`)}, NEW.position::text, true);
          RETURN NEW;
        END $$`
      yield* sql`CREATE TRIGGER audit_entries_feed_position BEFORE INSERT ON ${t("audit_entries")}
        FOR EACH ROW WHEN (NEW.position IS NULL) EXECUTE FUNCTION ${t("audit_entries_feed_position")}()`
      yield* sql`CREATE FUNCTION ${t("audit_entries_feed_position_store")}() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
          taken bigint := nullif(current_setting(${sql.literal(`'${setting}'`)}, true), '')::bigint;
        BEGIN
          IF taken IS NOT NULL THEN
            UPDATE ${counter} SET position = greatest(position, taken);
          END IF;
          RETURN NULL;
        END $$`
      yield* sql`CREATE TRIGGER audit_entries_feed_position_store AFTER INSERT ON ${t("audit_entries")}
        FOR EACH STATEMENT EXECUTE FUNCTION ${t("audit_entries_feed_position_store")}()`
    }),
  "0009_ledger": ledgerMigration,
  "0010_record_value_index": (schema) =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const t = (name: string) => sql(`${schema}.${name}`)
      // Lists filter by field value and record pages find what links to them with `values @> '{"field": ...}'`
      // (docs/web.md, "Lists"): one index of every value serves each field of every business object.
      yield* sql`CREATE INDEX records_values ON ${t("records")} USING gin (values jsonb_path_ops)`
    }),
  "0011_feed_positions_from_wal": feedPositionsFromWalMigration
}
