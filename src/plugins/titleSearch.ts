import { createHash } from "node:crypto"

/** A SQL string literal: the names come from plugin code, yet are quoted like any text. */
export const sqlLiteral = (text: string) => `'${text.replaceAll("'", "''")}'`

const valueText = (field: string) => `(values->>${sqlLiteral(field)})`

/**
 * A title rule (`BusinessObjectDeclaration.title`) as a SQL expression over
 * a record's `values`: a field's text, or a template's parts joined with
 * `||` (immutable, unlike `concat`, so an index can be made of it).
 */
export const titleExpression = (rule: string): string => {
  if (!rule.includes("{")) return `coalesce(${valueText(rule)}, '')`
  const parts = rule.split(/(\{[^{}]*\})/u).filter((part) => part.length > 0)
  if (parts.length === 0) return "''"
  return parts
    .map((part) =>
      part.startsWith("{") && part.endsWith("}") ? `coalesce(${valueText(part.slice(1, -1))}, '')` : sqlLiteral(part)
    )
    .join(" || ")
}

/** The words of a record's title, as the title search matches them and its index holds them. */
export const titleVector = (rule: string) => `to_tsvector('simple'::regconfig, ${titleExpression(rule)})`

/**
 * The GIN index of one business object's titles in a workspace's records
 * (`CREATE INDEX IF NOT EXISTS`): partial on the business object, named by a
 * hash of it and its rule, so a changed rule gets an index of its own.
 */
export const titleIndexStatement = (schema: string, businessObject: string, rule: string) => {
  const vector = titleVector(rule)
  const name = `records_title_${createHash("sha256").update(`${businessObject}\n${vector}`).digest("hex").slice(0, 16)}`
  const table = `"${schema.replaceAll('"', '""')}"."records"`
  return `CREATE INDEX IF NOT EXISTS ${name} ON ${table} USING gin (${vector}) WHERE business_object = ${sqlLiteral(businessObject)}`
}
