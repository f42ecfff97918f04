import { Effect, Option } from "effect"
import { CurrentActor } from "../context/Frames"
import { MissingActor } from "../context/MissingActor"
import { diffValues } from "../diff"
import type { Fields } from "../api/Field"
import type { BusinessObjectEvent } from "../events/BusinessObjectEvent"
import { CurrentUnit } from "../unitOfWork/CurrentUnit"
import type { StagedRow } from "../unitOfWork/AuditStaging"

/**
 * The audit listener: stages one row per event. The row keeps what its verb
 * determines: the born or final snapshot for created / deleted, the diff for
 * updated, nothing more for archived / restored. It never swallows an error.
 */
export const auditListener = (event: BusinessObjectEvent, fields: Fields) =>
  Effect.gen(function* () {
    const unit = yield* CurrentUnit
    const actor = yield* CurrentActor
    if (Option.isNone(actor)) {
      return yield* Effect.die(
        new MissingActor({ while: `auditing ${event.operation} of ${event.businessObject} ${event.businessObjectId}` })
      )
    }
    const base = {
      id: crypto.randomUUID(),
      actor: actor.value,
      correlationId: unit.correlationId,
      businessObject: event.businessObject,
      businessObjectId: event.businessObjectId,
      recordVersion: event.version,
      operation: event.operation,
      cause: event.cause
    }
    let row: StagedRow
    switch (event.operation) {
      case "created":
        row = { ...base, record: event.after ?? {} }
        break
      case "deleted":
        row = { ...base, record: event.before ?? {} }
        break
      case "updated": {
        const changes = diffValues(fields, event.before ?? {}, event.after ?? {})
        // Updates that change nothing are not dispatched; this guards the rule anyway.
        if (changes === null) return
        row = { ...base, changes }
        break
      }
      case "archived":
      case "restored":
      case "erased":
        row = base
        break
    }
    yield* unit.staging.stage(row)
  })
