import { Effect } from "effect"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Workspace } from "../../src/api/Workspace"
import { Seeders } from "../../src/seeding/Seeders"
import { freshWorkspace } from "../support/TestApp"
import { clientFor, recordsOf } from "../support/api"
import type { Client } from "../support/api"
import { signIn } from "../support/http"
import { chromiumInstalled, requireChromium } from "./support/chromium"
import { namedAdmin } from "./support/members"
import type { Person } from "./support/members"
import { recordPage, signInThroughForm } from "./support/pages"
import { startPageHarness } from "./support/pageHarness"
import type { PageHarness } from "./support/pageHarness"

/**
 * Names instead of ids (docs/titles.md) in Chromium against the real
 * service, on a workspace's seeded CRM data: a deal's timeline, the deal as
 * of its creation, and its company's timeline (a listener's cascade) show
 * titles and labels; no text reads as a UUID, its 8-character prefix, a
 * plugin-qualified name or a seeder's actor name; nor on Activity and the
 * close's unit-of-work page.
 */

const shown = { timeout: 10_000, interval: 100 }
/** What a person must never read: a UUID, its 8-character prefix, `crm/...`, `seeder:...`. */
const machineText = /[0-9a-f]{8}-[0-9a-f]{4}-|\b[0-9a-f]{8}\b|crm\/|seeder:/u

let harness: PageHarness | undefined
let browser: Browser | undefined
let base = ""
let ada: Person
let api: Client

beforeAll(async () => {
  if (!chromiumInstalled()) return
  harness = await startPageHarness()
  browser = harness.browser
  base = harness.base
  const workspace: Workspace = await harness.run(freshWorkspace)
  await harness.run(Effect.flatMap(Seeders, (seeders) => seeders.seedWorkspace(workspace)))
  ada = await harness.run(namedAdmin(workspace, "Ada Lovelace"))
  api = clientFor(base, await Effect.runPromise(signIn(base, ada)))
}, 240_000)

afterAll(async () => {
  await harness?.close()
}, 60_000)

const mainText = async (page: Page) => (await page.locator("main").textContent()) ?? ""

describe("titles on the page (Chromium, seeded CRM data)", () => {
  it("a deal's timeline, the deal as of its creation and its company's timeline name records, never ids", {
    timeout: 120_000
  }, async () => {
    requireChromium()
    if (browser === undefined) throw new Error("no browser")
    const deals = (await Effect.runPromise(recordsOf(api, "crm/deal").list())).body.records
    const pilot = deals.find((deal) => deal.title === "Acme pilot")
    if (pilot === undefined) throw new Error("the seed has no Acme pilot")
    // Closing it: the listeners count the win on the company (a cascade) and log an activity.
    await Effect.runPromise(recordsOf(api, "crm/deal").action("close", pilot.id))
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: "en-GB" })
    const page = await context.newPage()
    await signInThroughForm(page, base, ada)
    await page.goto(`${base}/records/crm/deal/${pilot.id}`)
    const record = recordPage(page)
    await expect
      .poll(() => record.timelineRows.getByRole("heading").allTextContents(), shown)
      .toEqual(["Updated by Ada Lovelace", "Created by Seed data (CRM)"])
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent(), shown).toBe("Deal: Acme pilot")
    const timeline = (await record.timeline.textContent()) ?? ""
    expect(timeline).toContain('action "Close deal"')
    expect(timeline).toContain("Acme Corporation")
    expect(timeline).not.toContain("direct edit")
    expect(await page.locator(".page-title").textContent()).not.toContain("operational")
    expect(await mainText(page)).not.toMatch(machineText)

    // As of its creation: the link by its title.
    await record.timelineRows.nth(1).getByRole("button", { name: "View as of this entry" }).click()
    const past = page.getByRole("region", { name: "Record as it was" })
    await past.waitFor(shown)
    await expect.poll(async () => (await past.textContent()) ?? "", shown).toContain("Acme Corporation")
    expect(await past.textContent()).toContain("Seed data (CRM)")
    expect(await mainText(page)).not.toMatch(machineText)

    // The company's timeline: the listener's update says which deal caused it, by its title.
    const company = pilot.values.company
    if (typeof company !== "string") throw new Error("the seeded deal names no company")
    await page.goto(`${base}/records/crm/company/${company}`)
    await expect
      .poll(() => record.timelineRows.getByRole("heading").allTextContents(), shown)
      .toEqual(["Updated by Ada Lovelace", "Created by Seed data (CRM)"])
    await expect.poll(async () => (await record.timeline.textContent()) ?? "", shown).toContain("Acme pilot")
    expect(await mainText(page)).not.toMatch(machineText)

    // Activity, newest first: the close's cascade on top, every row named by titles and labels.
    await page.goto(`${base}/activity`)
    const rows = page.getByRole("list", { name: "Changes, newest first" }).locator(":scope > li")
    await expect.poll(() => rows.count(), shown).toBeGreaterThan(3)
    await expect.poll(async () => (await rows.nth(2).textContent()) ?? "", shown).toContain("Acme pilot")
    const activity = await mainText(page)
    expect(activity).toContain("Seed data (CRM)")
    expect(activity).not.toContain("direct edit")
    expect(activity).not.toMatch(machineText)

    // The close's unit of work: titled by what happened, its cascade by titles.
    await rows.nth(2).getByRole("link", { name: "unit of work" }).click()
    const heading = page.getByRole("heading", { level: 1 })
    await expect.poll(async () => (await heading.textContent()) ?? "", shown).toContain("Acme pilot")
    await expect.poll(async () => (await mainText(page)).includes("Acme Corporation"), shown).toBe(true)
    expect(await mainText(page)).not.toMatch(machineText)
    await context.close()
  })
})
