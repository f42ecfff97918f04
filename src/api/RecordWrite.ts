import { Schema } from "effect"
import { StoredRecord } from "./StoredRecord"
import { ValuesInput } from "./ValuesInput"

const Values = ValuesInput

/**
 * One record write sent by a caller that is not a browser form: an agent's
 * tool call in a chat turn, or a write of the workflow engine.
 */
export const RecordWrite = Schema.Union([
  Schema.Struct({ tool: Schema.Literal("create"), businessObject: Schema.String, values: Values }),
  Schema.Struct({ tool: Schema.Literal("update"), businessObject: Schema.String, id: Schema.String, values: Values })
]).annotate({ identifier: "RecordWrite" })
export type RecordWrite = typeof RecordWrite.Type

/** Several writes, applied in order in one unit of work: all or none. */
export const RecordWrites = Schema.Array(RecordWrite).check(Schema.isMinLength(1), Schema.isMaxLength(50))

export class WrittenRecords extends Schema.Class<WrittenRecords>("WrittenRecords")({
  records: Schema.Array(StoredRecord)
}) {}
