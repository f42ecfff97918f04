import { describe, expect, it } from "vitest"
import type { Cause } from "../../src/api/Cause"
import { findCauseEntry } from "../../web/src/timeline/causeEntry"
import { describeActor } from "../../web/src/timeline/describe"

/** A cascade's row names what caused it: the page finds the causing row to say who did it. */

const row = (id: string, at: string, correlationId: string, operation: string, cause: Cause | null = null) => ({
  id,
  at,
  correlationId,
  businessObject: "crm/deal",
  businessObjectId: "d-1",
  operation,
  cause
})

const archivedDeal: Cause = {
  kind: "event",
  businessObject: "crm/deal",
  businessObjectId: "d-1",
  operation: "archived"
}

describe("findCauseEntry", () => {
  it("finds the causing row in the same unit of work first (a listener's write)", () => {
    const cascade = row("c", "2026-03-01T10:00:00Z", "u-2", "updated", { ...archivedDeal, operation: "updated" })
    const rows = [
      row("b", "2026-03-01T10:00:00Z", "u-2", "updated"),
      row("a", "2026-03-01T09:00:00Z", "u-1", "updated")
    ]
    expect(findCauseEntry(cascade, rows)?.id).toBe("b")
  })

  it("else the newest row of that record and operation written no later (a workflow runs after the event)", () => {
    const cascade = {
      ...row("w", "2026-03-01T10:00:05Z", "u-9", "created", archivedDeal),
      businessObject: "crm/activity"
    }
    const rows = [
      row("later", "2026-03-01T11:00:00Z", "u-3", "archived"),
      row("it", "2026-03-01T10:00:00Z", "u-2", "archived"),
      row("older", "2026-03-01T09:00:00Z", "u-1", "archived"),
      row("other", "2026-03-01T10:00:01Z", "u-4", "updated")
    ]
    expect(findCauseEntry(cascade, rows)?.id).toBe("it")
  })

  it("finds nothing for a direct edit, another cause kind, or a cause not among the rows", () => {
    const rows = [row("a", "2026-03-01T09:00:00Z", "u-1", "archived")]
    expect(findCauseEntry(row("x", "2026-03-01T10:00:00Z", "u-2", "updated"), rows)).toBeUndefined()
    const action: Cause = { kind: "action", action: "crm/deal/close" }
    expect(findCauseEntry(row("x", "2026-03-01T10:00:00Z", "u-2", "updated", action), rows)).toBeUndefined()
    const elsewhere: Cause = { ...archivedDeal, businessObjectId: "d-2" }
    expect(findCauseEntry(row("x", "2026-03-01T10:00:00Z", "u-2", "updated", elsewhere), rows)).toBeUndefined()
  })
})

describe("describeActor", () => {
  it("names a system actor by its plugin's label, else in words, never by its machine name", () => {
    const labels = {
      actors: {
        "seeder:crm": "Seed data (CRM)",
        "workflow:crm/note-archived-deal": "Workflow: Note on archived deals"
      },
      jobs: {},
      actions: {},
      listeners: {}
    }
    expect(describeActor({ kind: "system", name: "workflow:crm/note-archived-deal" }, { labels })).toBe(
      "Workflow: Note on archived deals"
    )
    expect(describeActor({ kind: "system", name: "seeder:crm" }, { labels })).toBe("Seed data (CRM)")
    expect(describeActor({ kind: "system", name: "workflow:crm/note-archived-deal" })).toBe(
      "Workflow: note archived deal"
    )
    expect(describeActor({ kind: "system", name: "seeder:crm" })).toBe("Seed data")
  })
})
