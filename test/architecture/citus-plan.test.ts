import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { freshWorkspace, TestServices, uniqueSuffix } from "../support/TestApp"

/**
 * docs/citus.md, "What the plan forbids": each rule is a catalog query
 * returning one line per violation found among the schemas `tenant` matches.
 * Run on real migrated workspaces, and on a schema built to break each rule.
 */
const rules = (tenant: string) => ({
  "foreign key between a workspace schema and another schema": `
    SELECT c.conname || ': ' || cn.nspname || '.' || cr.relname || ' -> ' || fn.nspname || '.' || fr.relname AS line
    FROM pg_constraint c
    JOIN pg_class cr ON cr.oid = c.conrelid JOIN pg_namespace cn ON cn.oid = cr.relnamespace
    JOIN pg_class fr ON fr.oid = c.confrelid JOIN pg_namespace fn ON fn.oid = fr.relnamespace
    WHERE c.contype = 'f' AND cn.oid <> fn.oid AND (cn.nspname ~ '${tenant}' OR fn.nspname ~ '${tenant}')`,
  "object outside a workspace schema depending on a workspace table": `
    SELECT DISTINCT pg_describe_object(d.classid, d.objid, d.objsubid) || ' -> ' || rn.nspname || '.' || r.relname AS line
    FROM pg_depend d
    JOIN pg_class r ON d.refclassid = 'pg_class'::regclass AND r.oid = d.refobjid
    JOIN pg_namespace rn ON rn.oid = r.relnamespace
    LEFT JOIN pg_rewrite w ON d.classid = 'pg_rewrite'::regclass AND w.oid = d.objid
    LEFT JOIN pg_class wc ON wc.oid = w.ev_class
    LEFT JOIN pg_constraint k ON d.classid = 'pg_constraint'::regclass AND k.oid = d.objid
    LEFT JOIN pg_class kc ON kc.oid = k.conrelid
    LEFT JOIN pg_attrdef a ON d.classid = 'pg_attrdef'::regclass AND a.oid = d.objid
    LEFT JOIN pg_class ac ON ac.oid = a.adrelid
    WHERE rn.nspname ~ '${tenant}'
      AND coalesce(wc.relnamespace, kc.relnamespace, ac.relnamespace) IS NOT NULL
      AND coalesce(wc.relnamespace, kc.relnamespace, ac.relnamespace) <> rn.oid`,
  "trigger on a workspace table calling a function of another schema": `
    SELECT t.tgname || ' on ' || tn.nspname || '.' || tc.relname || ' calls ' || fn.nspname || '.' || f.proname AS line
    FROM pg_trigger t
    JOIN pg_class tc ON tc.oid = t.tgrelid JOIN pg_namespace tn ON tn.oid = tc.relnamespace
    JOIN pg_proc f ON f.oid = t.tgfoid JOIN pg_namespace fn ON fn.oid = f.pronamespace
    WHERE NOT t.tgisinternal AND tn.nspname ~ '${tenant}' AND fn.oid <> tn.oid`,
  "function of a workspace schema naming another schema's objects": `
    SELECT fn.nspname || '.' || f.proname || ' names ' || other.nspname AS line
    FROM pg_proc f JOIN pg_namespace fn ON fn.oid = f.pronamespace
    JOIN pg_namespace other ON other.oid <> fn.oid
      AND other.nspname NOT IN ('pg_catalog', 'information_schema') AND other.nspname !~ '^pg_'
    WHERE fn.nspname ~ '${tenant}' AND f.prosrc ~* ('(^|[^a-z0-9_])"?' || other.nspname || '"?\\.')`,
  "column default of a workspace table using another schema's sequence": `
    SELECT cn.nspname || '.' || c.relname || '.' || att.attname || ' uses ' || sn.nspname || '.' || s.relname AS line
    FROM pg_attrdef a
    JOIN pg_class c ON c.oid = a.adrelid JOIN pg_namespace cn ON cn.oid = c.relnamespace
    JOIN pg_attribute att ON att.attrelid = a.adrelid AND att.attnum = a.adnum
    JOIN pg_depend d ON d.classid = 'pg_attrdef'::regclass AND d.objid = a.oid AND d.refclassid = 'pg_class'::regclass
    JOIN pg_class s ON s.oid = d.refobjid AND s.relkind = 'S' JOIN pg_namespace sn ON sn.oid = s.relnamespace
    WHERE cn.nspname ~ '${tenant}' AND sn.oid <> cn.oid`,
  "workspace table inheriting from or partitioned under another schema's table": `
    SELECT cn.nspname || '.' || c.relname || ' inherits ' || pn.nspname || '.' || p.relname AS line
    FROM pg_inherits i
    JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_namespace cn ON cn.oid = c.relnamespace
    JOIN pg_class p ON p.oid = i.inhparent JOIN pg_namespace pn ON pn.oid = p.relnamespace
    WHERE cn.oid <> pn.oid AND (cn.nspname ~ '${tenant}' OR pn.nspname ~ '${tenant}')`
})

const violations = (tenant: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const found: Record<string, ReadonlyArray<string>> = {}
    for (const [rule, query] of Object.entries(rules(tenant))) {
      const rows = yield* sql.unsafe<{ line: string }>(query)
      if (rows.length > 0) found[rule] = rows.map((row) => row.line)
    }
    return found
  })

layer(TestServices, { excludeTestServices: true })("the Citus schema-based sharding plan (docs/citus.md)", (it) => {
  it.effect("two migrated workspaces break none of its rules", () =>
    Effect.gen(function* () {
      const a = yield* freshWorkspace
      const b = yield* freshWorkspace
      const tenants = `^(${a.schema}|${b.schema})$`
      expect(yield* violations(tenants)).toEqual({})
    })
  )

  it.effect("each rule catches what it forbids", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const schema = `ws_citus_plan_${uniqueSuffix()}`
      const other = `${schema}_other`
      const q = (name: string) => `"${schema}"."${name}"`
      yield* Effect.acquireRelease(
        Effect.gen(function* () {
          yield* sql.unsafe(`CREATE SCHEMA "${schema}"`)
          yield* sql.unsafe(`CREATE SCHEMA "${other}"`)
        }),
        () => sql.unsafe(`DROP SCHEMA "${schema}", "${other}" CASCADE`).pipe(Effect.orDie)
      )
      yield* sql.unsafe(`CREATE SEQUENCE "${other}".counter`)
      yield* sql.unsafe(`CREATE TABLE "${other}".parent (id int PRIMARY KEY)`)
      yield* sql.unsafe(
        `CREATE FUNCTION "${other}".stamp() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$`
      )
      yield* sql.unsafe(`CREATE TABLE ${q("t")} (id int PRIMARY KEY REFERENCES "${other}".parent,
        n bigint DEFAULT nextval('"${other}".counter'))`)
      yield* sql.unsafe(`CREATE VIEW "${other}".peek AS SELECT id FROM ${q("t")}`)
      yield* sql.unsafe(
        `CREATE TRIGGER stamp BEFORE INSERT ON ${q("t")} FOR EACH ROW EXECUTE FUNCTION "${other}".stamp()`
      )
      yield* sql.unsafe(
        `CREATE FUNCTION ${q("reach")}() RETURNS bigint LANGUAGE sql AS $$ SELECT count(*) FROM ${other}.parent $$`
      )
      yield* sql.unsafe(`CREATE TABLE ${q("child")} () INHERITS ("${other}".parent)`)
      const found = yield* violations(`^${schema}$`)
      expect(Object.keys(found).sort()).toEqual(Object.keys(rules(schema)).sort())
    })
  )
})
