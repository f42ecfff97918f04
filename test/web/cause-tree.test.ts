import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Schema } from "effect"
import type { Cause, Operation } from "../../src/api/Cause"
import type { CauseNode } from "../../web/src/activity/causeTree"
import { causeTree } from "../../web/src/activity/causeTree"

/** The unit-of-work page draws its story as a tree: each row under the row whose event caused it. */

interface Row {
  readonly id: string
  readonly at: string
  readonly correlationId: string
  readonly businessObject: string
  readonly businessObjectId: string
  readonly operation: Operation
  readonly cause: Cause | null
}

const event = (businessObject: string, businessObjectId: string, operation: Operation): Cause => ({
  kind: "event",
  businessObject,
  businessObjectId,
  operation
})

const shape = (nodes: ReadonlyArray<CauseNode<Row>>): Array<unknown> =>
  nodes.map((node) => (node.children.length === 0 ? node.entry.id : [node.entry.id, shape(node.children)]))

const flatten = <E>(nodes: ReadonlyArray<CauseNode<E>>): Array<{ entry: E; parent: E | undefined }> =>
  nodes.flatMap((node) => [
    { entry: node.entry, parent: undefined },
    ...flatten(node.children).map((child) => ({ ...child, parent: child.parent ?? node.entry }))
  ])

describe("causeTree", () => {
  it("the CRM's close: deal won -> the company's won deals -> an activity, and a direct edit beside it", () => {
    const at = "2026-03-01T10:00:00Z"
    const rows: Array<Row> = [
      {
        id: "deal",
        at,
        correlationId: "u",
        businessObject: "crm/deal",
        businessObjectId: "d",
        operation: "updated",
        cause: { kind: "action", action: "crm/deal/close" }
      },
      {
        id: "company",
        at,
        correlationId: "u",
        businessObject: "crm/company",
        businessObjectId: "c",
        operation: "updated",
        cause: event("crm/deal", "d", "updated")
      },
      {
        id: "activity",
        at,
        correlationId: "u",
        businessObject: "crm/activity",
        businessObjectId: "a",
        operation: "created",
        cause: event("crm/company", "c", "updated")
      },
      {
        id: "unknown cause",
        at,
        correlationId: "u",
        businessObject: "crm/activity",
        businessObjectId: "b",
        operation: "created",
        cause: event("crm/company", "elsewhere", "updated")
      }
    ]
    expect(shape(causeTree(rows))).toEqual([["deal", [["company", ["activity"]]]], "unknown cause"])
    expect(causeTree([])).toEqual([])
  })

  const key = Schema.Struct({
    correlationId: Schema.Literals(["u1", "u2"]),
    record: Schema.Literals(["r1", "r2", "r3"]),
    operation: Schema.Literals(["created", "updated"]),
    cause: Schema.NullOr(
      Schema.Struct({
        record: Schema.Literals(["r1", "r2", "r3"]),
        operation: Schema.Literals(["created", "updated"])
      })
    )
  })
  it.prop(
    "every row once; a child's cause names its parent's record and operation; parents come first; roots have no cause before them",
    { keys: Arbitrary.array(Arbitrary.schema(key), { maxLength: 30 }) },
    ({ keys }) => {
      const rows: Array<Row> = keys.map((k, index) => ({
        id: String(index),
        at: new Date(Date.UTC(2026, 0, 1, 0, 0, Math.floor(index / 3))).toISOString(),
        correlationId: k.correlationId,
        businessObject: "crm/deal",
        businessObjectId: k.record,
        operation: k.operation,
        cause: k.cause === null ? null : event("crm/deal", k.cause.record, k.cause.operation)
      }))
      const placed = flatten(causeTree(rows))
      expect(placed.map(({ entry }) => entry.id).sort()).toEqual(rows.map((row) => row.id).sort())
      const order = (row: Row) => rows.indexOf(row)
      for (const { entry, parent } of placed) {
        const cause = entry.cause
        if (parent === undefined) {
          const causing = rows
            .slice(0, order(entry))
            .some(
              (row) =>
                cause?.kind === "event" &&
                row.businessObjectId === cause.businessObjectId &&
                row.operation === cause.operation
            )
          expect(causing).toBe(false)
          continue
        }
        expect(cause).toEqual(event(parent.businessObject, parent.businessObjectId, parent.operation))
        expect(order(parent)).toBeLessThan(order(entry))
      }
    }
  )
})
