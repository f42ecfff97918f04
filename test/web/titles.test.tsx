// @vitest-environment jsdom
import { cleanup, render } from "@testing-library/react"
import { afterEach, describe, expect, it } from "vitest"
import type { AuditEntry, Fields } from "../../src/client"
import { hydrateTimeline } from "../../src/client"
import { TimelineRow } from "../../web/src/timeline/TimelineRow"
import { describeCause, describeRecord } from "../../web/src/timeline/describe"
import { LabelsProvider } from "../../web/src/titles/naming"
import { StateBadge } from "../../web/src/titles/StateBadge"
import { recordTitle } from "../../web/src/records/recordTitle"

/**
 * Names instead of ids and machine names (docs/titles.md): link values by
 * the titles the row carried, a deleted target marked; actors, actions and
 * jobs by the plugins' labels with the technical name on hover; seed data
 * is no "direct edit"; the state badge says nothing for a live record.
 */

const fields: Fields = {
  subject: { kind: "string" },
  company: { kind: "link", target: "crm/company" },
  contacts: { kind: "collection", fields: { who: { kind: "link", target: "crm/company" } } }
}
const acme = "0190a5c4-7f3e-7a61-9b2d-3c4e5f607182"
const globex = "0190a5c4-7f3e-7a61-9b2d-3c4e5f6071aa"
const self = "0190a5c4-7f3e-7a61-9b2d-3c4e5f607100"
const labels = {
  actors: { "seeder:crm": "Seed data (CRM)", "workflow:crm/note-archived-deal": "Workflow: Note on archived deals" },
  jobs: { "crm/follow-up": "Follow-up activity" },
  actions: { "crm/deal/close": "Close deal" },
  listeners: {}
}

const row = (entry: Partial<AuditEntry>): AuditEntry => ({
  id: "0190a5c4-7f3e-7a61-9b2d-3c4e5f6071ff",
  at: "2026-03-01T09:30:00.123456Z",
  correlationId: "0190a5c4-7f3e-7a61-9b2d-3c4e5f6071ee",
  businessObject: "crm/activity",
  businessObjectId: self,
  actor: { kind: "system", name: "seeder:crm" },
  operation: "created",
  cause: null,
  ...entry
})

const shown = (entry: AuditEntry, withLabels = true) => {
  const [hydrated] = hydrateTimeline([{ name: "crm/activity", fields }], [entry])
  if (hydrated === undefined) throw new Error("no row")
  const rendered = render(
    <LabelsProvider labels={withLabels ? labels : undefined}>
      <TimelineRow entry={hydrated} fields={fields} entries={new Map()} />
    </LabelsProvider>
  )
  return rendered.container
}

const idLike = /[0-9a-f]{8}-[0-9a-f]{4}|\b[0-9a-f]{8}\b|crm\/|seeder:/u

afterEach(cleanup)

describe("titles and labels on a timeline row", () => {
  it("a seeded row: by 'Seed data (CRM)' (seeder:crm on hover), no 'direct edit', links by their titles", () => {
    const container = shown(
      row({
        record: { subject: "Kick-off", company: acme, contacts: [{ id: "c1", who: globex }] },
        titles: {
          [self]: { title: "Kick-off", deleted: false },
          [acme]: { title: "Acme Corporation", deleted: false },
          [globex]: { title: "Globex", deleted: true }
        }
      })
    )
    const text = container.textContent ?? ""
    expect(text).toContain("Created by Seed data (CRM)")
    expect(container.querySelector(".actor")?.getAttribute("title")).toBe("seeder:crm")
    expect(text).not.toContain("direct edit")
    expect(text).toContain("with the workspace")
    expect(text).toContain("Acme Corporation")
    expect(text).toContain("Globex (deleted)")
    expect(text).not.toMatch(idLike)
  })

  it("a link changed: both sides by title; an id the row does not know reads 'unknown record', never the id", () => {
    const container = shown(
      row({
        actor: { kind: "user", id: "u-1", name: "Ada Lovelace", email: "ada@example.com" },
        operation: "updated",
        cause: { kind: "action", action: "crm/deal/close" },
        changes: { company: { from: acme, to: globex } },
        titles: { [acme]: { title: "Acme Corporation", deleted: false } }
      })
    )
    const change = container.querySelector(".value-change")?.textContent ?? ""
    expect(change).toBe("Acme Corporation → unknown record")
    expect(container.querySelector(".cause")?.textContent).toBe('action "Close deal"')
    expect(container.querySelector(".cause")?.getAttribute("title")).toBe("crm/deal/close")
    expect(container.textContent).not.toMatch(idLike)
  })

  it("without the plugins' labels (an older service) still no machine name", () => {
    const container = shown(
      row({
        actor: { kind: "system", name: "workflow:crm/note-archived-deal" },
        cause: { kind: "job", job: "crm/follow-up", jobId: "j" }
      }),
      false
    )
    expect(container.textContent).toContain("Created by Workflow: note archived deal")
    expect(container.textContent).toContain('background job "Follow up"')
    expect(container.textContent).not.toMatch(idLike)
  })
})

describe("describing causes and records", () => {
  it("an event cause by the causing record's title; unknown: by its type alone", () => {
    const cause = { kind: "event", businessObject: "crm/deal", businessObjectId: acme, operation: "updated" } as const
    expect(describeCause(cause, { titles: { [acme]: { title: "Kiosk", deleted: false } } })).toBe(
      'after deal "Kiosk" was updated'
    )
    expect(describeCause(cause)).toBe("after a deal was updated")
    expect(describeRecord("crm/deal", acme, { [acme]: { title: "Kiosk", deleted: true } })).toBe(
      'deal "Kiosk" (deleted)'
    )
    expect(describeCause({ kind: "action", action: "crm/deal/revert", revert: { entry: acme, mode: "undo" } })).toBe(
      "undid an earlier entry"
    )
  })

  it("a record's title: the service's, else its first text that is not an id, else Untitled", () => {
    expect(recordTitle(fields, { id: self, title: "Kick-off", values: {} })).toBe("Kick-off")
    expect(recordTitle(fields, { id: self, values: { subject: acme } })).toBe("Untitled")
    expect(recordTitle(fields, { id: self, values: { subject: "Call" } })).toBe("Call")
  })
})

describe("the state badge", () => {
  it("says nothing for a live record, Draft or Archived otherwise", () => {
    expect(render(<StateBadge state="operational" />).container.textContent).toBe("")
    expect(render(<StateBadge state="draft" />).container.textContent).toBe("Draft")
    expect(render(<StateBadge state="archived" />).container.textContent).toBe("Archived")
  })
})
