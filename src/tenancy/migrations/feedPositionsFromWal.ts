import { SqlClient } from "effect/sql"
import { Effect } from "effect"
import type { SchemaMigration } from "../Migrations"

/**
 * Lets a row wait for its feed position (docs/feed.md, "Order", WAL mode): in
 * WAL mode the unit's INSERT writes its rows with `position` and `hash` NULL
 * and the positioner (src/feedPositions/) sets both after COMMIT, in commit
 * order. The update trigger (its name kept from 0009) lets exactly that UPDATE through besides an
 * erasure's: `position` and `hash` set on a row that has neither, every other
 * column unchanged; a row's position, once set, is never changed. DELETE and
 * TRUNCATE stay refused (the statement trigger of 0009). The hand-insert
 * trigger of 0008 now positions only rows the service did not write (they
 * carry no salt), so a WAL-mode INSERT takes no lock; the service's lock-mode
 * INSERT gives every row its position itself, as before.
 */
export const feedPositionsFromWalMigration: SchemaMigration = (schema) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const t = (name: string) => sql(`${schema}.${name}`)
    yield* sql`ALTER TABLE ${t("audit_entries")} ALTER COLUMN position DROP NOT NULL`
    // What the positioner and its gauge look for: small, as rows leave it within milliseconds.
    yield* sql`CREATE INDEX audit_entries_unpositioned ON ${t("audit_entries")} (seq) WHERE position IS NULL`
    yield* sql`DROP TRIGGER audit_entries_feed_position ON ${t("audit_entries")}`
    yield* sql`CREATE TRIGGER audit_entries_feed_position BEFORE INSERT ON ${t("audit_entries")}
      FOR EACH ROW WHEN (NEW.position IS NULL AND NEW.salt IS NULL)
      EXECUTE FUNCTION ${t("audit_entries_feed_position")}()`
    yield* sql`CREATE OR REPLACE FUNCTION ${t("audit_entries_erasure_only")}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF OLD.position IS NULL AND OLD.hash IS NULL AND NEW.position IS NOT NULL AND NEW.hash IS NOT NULL
          AND (NEW.seq, NEW.id, NEW.at, NEW.actor, NEW.correlation_id, NEW.parent_correlation_id, NEW.business_object,
               NEW.business_object_id, NEW.record_version, NEW.operation, NEW.cause, NEW.record, NEW.changes, NEW.salt,
               NEW.erased_salts)
          IS NOT DISTINCT FROM
              (OLD.seq, OLD.id, OLD.at, OLD.actor, OLD.correlation_id, OLD.parent_correlation_id, OLD.business_object,
               OLD.business_object_id, OLD.record_version, OLD.operation, OLD.cause, OLD.record, OLD.changes, OLD.salt,
               OLD.erased_salts) THEN
          RETURN NEW;
        END IF;
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
  })
