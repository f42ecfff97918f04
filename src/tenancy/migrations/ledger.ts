import { randomBytes } from "node:crypto"
import { SqlClient } from "effect/sql"
import { Effect } from "effect"
import { contentHash, genesisHash, linkHash, rootSalts } from "../../chain/rowHash"
import { ledgerRowOf, ledgerRowColumns } from "../../chain/storedRow"
import type { StoredLedgerRow } from "../../chain/storedRow"
import type { SchemaMigration } from "../Migrations"

const batchSize = 2000

/**
 * Turns a workspace's audit table into its ledger (docs/ledger.md): every
 * row gets a salt and a hash chaining it to the row before it in feed order,
 * the counter keeps the last link, and from now on the write path chains
 * each row it inserts. Rows already here are chained once, as they are
 * found; their positions may have gaps (positions were once the identity
 * column's values), so the counter also records where the gapless part
 * begins. The permanence trigger is replaced by one that still refuses
 * every DELETE and TRUNCATE and lets an UPDATE through only for an erasure
 * (src/ledger/Erasure.ts): inside a transaction that says so, only the
 * values and their salts of a row may change, never its place or its hash.
 */
export const ledgerMigration: SchemaMigration = (schema) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const t = (name: string) => sql(`${schema}.${name}`)
    yield* sql`ALTER TABLE ${t("audit_entries")}
      ADD COLUMN salt bytea, ADD COLUMN hash bytea, ADD COLUMN erased_salts jsonb`
    yield* sql`ALTER TABLE ${t("feed_position")} ADD COLUMN head bytea, ADD COLUMN chained_from bigint`
    // An erasure is an audit row of its own: who erased which fields of a record, when; never the values.
    yield* sql`ALTER TABLE ${t("audit_entries")} DROP CONSTRAINT audit_entries_operation_check`
    yield* sql`ALTER TABLE ${t("audit_entries")} ADD CONSTRAINT audit_entries_operation_check
      CHECK (operation IN ('created', 'updated', 'deleted', 'archived', 'restored', 'erased'))`
    yield* sql`ALTER TABLE ${t("audit_entries")} DISABLE TRIGGER audit_entries_are_permanent`
    let previous: Buffer = genesisHash(schema)
    let after = "0"
    for (;;) {
      const rows = yield* sql<StoredLedgerRow>`SELECT ${sql.literal(ledgerRowColumns)} FROM ${t("audit_entries")} AS e
        WHERE e.position > ${after}::bigint ORDER BY e.position LIMIT ${batchSize}`
      if (rows.length === 0) break
      const chained = rows.map((stored) => {
        const salt = randomBytes(16)
        const row = ledgerRowOf(stored)
        previous = linkHash(
          previous,
          BigInt(stored.position),
          BigInt(stored.atMicros),
          contentHash(row, rootSalts(salt))
        )
        return { id: stored.id, salt: salt.toString("hex"), hash: previous.toString("hex") }
      })
      yield* sql`UPDATE ${t("audit_entries")} AS a SET salt = decode(c.salt, 'hex'), hash = decode(c.hash, 'hex')
        FROM jsonb_to_recordset(${JSON.stringify(chained)}::jsonb) AS c(id uuid, salt text, hash text)
        WHERE a.id = c.id`
      after = String(rows[rows.length - 1]?.position ?? after)
    }
    yield* sql`UPDATE ${t("feed_position")} SET head = decode(${previous.toString("hex")}, 'hex'), chained_from = position`
    yield* sql`ALTER TABLE ${t("feed_position")} ALTER COLUMN head SET NOT NULL`
    yield* sql`ALTER TABLE ${t("audit_entries")} ENABLE TRIGGER audit_entries_are_permanent`
    yield* sql`DROP TRIGGER audit_entries_are_permanent ON ${t("audit_entries")}`
    yield* sql`CREATE TRIGGER audit_entries_are_permanent BEFORE DELETE OR TRUNCATE ON ${t("audit_entries")}
      FOR EACH STATEMENT EXECUTE FUNCTION ${t("audit_entries_are_permanent")}()`
    yield* sql`CREATE FUNCTION ${t("audit_entries_erasure_only")}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF current_setting('abs.audit_erasure', true) IS DISTINCT FROM 'on' THEN
          RAISE EXCEPTION 'audit entries are permanent';
        END IF;
        IF (NEW.seq, NEW.id, NEW.at, NEW.actor, NEW.correlation_id, NEW.parent_correlation_id, NEW.business_object,
            NEW.business_object_id, NEW.record_version, NEW.operation, NEW.cause, NEW.position, NEW.hash)
          IS DISTINCT FROM
           (OLD.seq, OLD.id, OLD.at, OLD.actor, OLD.correlation_id, OLD.parent_correlation_id, OLD.business_object,
            OLD.business_object_id, OLD.record_version, OLD.operation, OLD.cause, OLD.position, OLD.hash) THEN
          RAISE EXCEPTION 'an erasure changes only the values of an audit entry';
        END IF;
        RETURN NEW;
      END $$`
    yield* sql`CREATE TRIGGER audit_entries_erasure_only BEFORE UPDATE ON ${t("audit_entries")}
      FOR EACH ROW EXECUTE FUNCTION ${t("audit_entries_erasure_only")}()`
  })
