import { Schema } from "effect"
import { AuditEntry } from "../../../src/api/AuditEntry"
import type { Definition } from "../../../src/client"
import { field } from "../../../src/api/Field"
import type { Fields } from "../../../src/api/Field"

/** A business object with every field kind, nested: what the hydration tests read rows against. */
export const dealFields: Fields = {
  title: field.string,
  quantity: field.number,
  signed: field.boolean,
  amount: field.decimal,
  closeDate: field.date,
  closedAt: field.datetime,
  address: field.struct({ street: field.string, since: field.date, rent: field.decimal }),
  lineItems: field.collection({
    product: field.string,
    price: field.decimal,
    delivery: field.date,
    size: field.struct({ weight: field.decimal }),
    parts: field.collection({ name: field.string, cost: field.decimal })
  })
}

export const deal: Definition = { name: "crm/deal", fields: dealFields }

let seq = 0

/** A timeline row exactly as the endpoint serves it (decoded with the server's AuditEntry schema). */
export const row = (parts: {
  readonly businessObject?: string
  readonly operation?: string
  readonly record?: unknown
  readonly changes?: unknown
}): AuditEntry =>
  Schema.decodeUnknownSync(AuditEntry)({
    id: `row-${++seq}`,
    at: "2026-03-01T09:30:00.123456Z",
    actor: { kind: "user", id: "u1", name: "Ann", email: "ann@example.com" },
    correlationId: "c1",
    businessObject: parts.businessObject ?? "crm/deal",
    businessObjectId: "r1",
    operation: parts.operation ?? (parts.changes === undefined ? "created" : "updated"),
    cause: null,
    ...(parts.record === undefined ? {} : { record: parts.record }),
    ...(parts.changes === undefined ? {} : { changes: parts.changes })
  })

/** `fields` with the top-level field `name` replaced by `replacement`, or removed when it is undefined. */
export const withField = (fields: Fields, name: string, replacement: Fields[string] | undefined): Fields => {
  const { [name]: _old, ...rest } = fields
  return replacement === undefined ? rest : { ...rest, [name]: replacement }
}
