import { Effect, Schema } from "effect"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { PresenceList } from "../../src/api/Editor"
import type { Workspace } from "../../src/api/Workspace"
import { Roles } from "../../src/auth/Roles"
import { freshWorkspace } from "../support/TestApp"
import { clientFor, createRecord, recordsOf } from "../support/api"
import type { Client } from "../support/api"
import { signIn } from "../support/http"
import { chromiumInstalled, requireChromium } from "./support/chromium"
import { namedAdmin, namedMember } from "./support/members"
import type { Person } from "./support/members"
import { recordPage, signInThroughForm } from "./support/pages"
import { pageContext, startPageHarness } from "./support/pageHarness"
import type { PageHarness } from "./support/pageHarness"

/**
 * The record page of issue 14 in Chromium against the real service: a
 * stale save meets the conflict view, the whole timeline loads, a reader
 * sees a read-only record, lifecycle steps and actions work from the page,
 * and "New deal" checks its required fields before saving anything.
 * Every wait is on a condition the page shows.
 */

const shown = { timeout: 10_000, interval: 100 }

let harness: PageHarness | undefined
let browser: Browser | undefined
let base = ""
let ada: Person
let grace: Person
let reader: Person
let api: Client

beforeAll(async () => {
  if (!chromiumInstalled()) return
  harness = await startPageHarness()
  browser = harness.browser
  base = harness.base
  const run = harness.run
  const workspace: Workspace = await run(freshWorkspace)
  await run(
    Effect.flatMap(Roles, (roles) =>
      Effect.andThen(
        roles.grant(workspace, "deal-reader", "crm/deal", "read"),
        roles.grant(workspace, "deal-reader", "crm/company", "read")
      )
    )
  )
  ada = await run(namedAdmin(workspace, "Ada Lovelace"))
  grace = await run(namedAdmin(workspace, "Grace Hopper"))
  reader = await run(namedMember(workspace, "Rita Reader", "deal-reader"))
  api = clientFor(base, await Effect.runPromise(signIn(base, ada)))
}, 240_000)

afterAll(async () => {
  await harness?.close()
}, 60_000)

const openContext = (): Promise<BrowserContext> => pageContext(browser)

const deals = () => recordsOf(api, "crm/deal")
const create = (businessObject: string, values: Readonly<Record<string, unknown>>) =>
  Effect.runPromise(createRecord(api, businessObject, values))
const dealNow = async (id: string) => (await Effect.runPromise(deals().get(id))).body

/** Signs `person` in in a context of their own and opens the deal's page at its address. */
const openDeal = async (person: Person, id: string): Promise<{ page: Page; context: BrowserContext }> => {
  const context = await openContext()
  const page = await context.newPage()
  await signInThroughForm(page, base, person)
  await page.goto(`${base}/records/crm/deal/${id}`)
  await page.getByRole("list", { name: "Timeline entries" }).getByRole("article").first().waitFor()
  return { page, context }
}

const headings = (page: Page) =>
  page.getByRole("list", { name: "Timeline entries" }).getByRole("article").getByRole("heading").allTextContents()

describe("the record page (Chromium, PostgreSQL, Redis)", () => {
  it("a stale save shows who changed what; keeping mine saves it on the new version and loses nothing", {
    timeout: 120_000
  }, async () => {
    requireChromium()
    const deal = await create("crm/deal", { title: "Conflict deal", amount: "100.00" })
    const a = await openDeal(ada, deal.id)
    const g = await openDeal(grace, deal.id)
    const adaPage = recordPage(a.page)
    const gracePage = recordPage(g.page)

    // Grace starts editing on version 1; Ada saves another field meanwhile.
    await gracePage.field("Title").fill("Grace's deal")
    await adaPage.field("Amount").fill("999.00")
    await adaPage.save.click()
    await expect.poll(() => adaPage.saveStatus.textContent(), shown).toBe("Saved")
    // Grace's page shows Ada's amount live, and keeps her own unsaved title.
    await expect.poll(() => gracePage.field("Amount").inputValue(), shown).toBe("999.00")
    expect(await gracePage.field("Title").inputValue()).toBe("Grace's deal")

    // Her save was made on version 1: refused, and the conflict view says what Ada did.
    await gracePage.save.click()
    const conflict = g.page.getByRole("alert").filter({ hasText: "Changed since you opened it" })
    await conflict.waitFor(shown)
    expect(await conflict.getByRole("list", { name: "Who changed what" }).textContent()).toBe(
      "Ada Lovelace changed Amount"
    )
    const theirs = conflict.getByRole("list", { name: "Changes since you opened it" }).getByRole("article")
    expect(await theirs.count()).toBe(1)
    expect(await theirs.getByRole("heading").textContent()).toBe("Updated by Ada Lovelace")
    expect(await theirs.textContent()).toContain("100.00")
    expect(await theirs.textContent()).toContain("999.00")
    expect(await gracePage.saveStatus.textContent()).toBe("Not saved: changed meanwhile")
    expect((await dealNow(deal.id)).values).toEqual({ title: "Conflict deal", amount: "999.00" })

    await conflict.getByRole("button", { name: "Keep mine" }).click()
    await expect.poll(() => gracePage.saveStatus.textContent(), shown).toBe("Saved")
    expect(await conflict.count()).toBe(0)
    expect((await dealNow(deal.id)).values).toEqual({ title: "Grace's deal", amount: "999.00" })
    expect((await dealNow(deal.id)).version).toBe(3)
    // Both changes are on both timelines.
    const both = ["Updated by Grace Hopper", "Updated by Ada Lovelace", "Created by Ada Lovelace"]
    await expect.poll(() => headings(g.page), shown).toEqual(both)
    await expect.poll(() => headings(a.page), shown).toEqual(both)
    await a.context.close()
    await g.context.close()
  })

  it("taking theirs drops my edits and shows the record as it is now", { timeout: 120_000 }, async () => {
    requireChromium()
    const deal = await create("crm/deal", { title: "Theirs deal" })
    const g = await openDeal(grace, deal.id)
    const gracePage = recordPage(g.page)
    await gracePage.field("Title").fill("Mine")
    await Effect.runPromise(deals().update(deal.id, { title: "Theirs" }))
    await gracePage.save.click()
    const conflict = g.page.getByRole("alert").filter({ hasText: "Changed since you opened it" })
    await conflict.getByRole("button", { name: "Take theirs" }).click()
    await expect.poll(() => gracePage.field("Title").inputValue(), shown).toBe("Theirs")
    expect(await conflict.count()).toBe(0)
    expect((await dealNow(deal.id)).values).toEqual({ title: "Theirs" })
    await g.context.close()
  })

  it("presence: all tabs of one browser are one person for others, each tab an editor of its own, never someone else to their owner", {
    timeout: 120_000
  }, async () => {
    requireChromium()
    const deal = await create("crm/deal", { title: "Two tabs" })
    const a = await openDeal(ada, deal.id)
    const second = await a.context.newPage()
    await second.goto(`${base}/records/crm/deal/${deal.id}`)
    await recordPage(second).field("Title").waitFor()
    const g = await openDeal(grace, deal.id)
    const nobody = "Nobody else is editing this record."

    // Both of Ada's tabs hold edits: Grace sees one Ada; neither of Ada's tabs sees Ada.
    await recordPage(a.page).field("Title").fill("Tab one")
    await recordPage(second).field("Title").fill("Tab two")
    await expect
      .poll(() => recordPage(g.page).editors.textContent(), shown)
      .toBe("Ada Lovelace is editing this record.")
    for (const tab of [a.page, second]) {
      await expect.poll(() => recordPage(tab).editors.textContent(), shown).toBe(nobody)
    }
    // To the service each tab is an editor of its own, so that one tab leaving does not take Ada away.
    const adaEditors = async () => {
      const response = await Effect.runPromise(api.get("/api/presence/crm/deal"))
      return Schema.decodeUnknownSync(PresenceList)(response.body).records[deal.id]?.length ?? 0
    }
    await expect.poll(adaEditors, shown).toBe(2)
    // One tab closes: the other still is Ada (at once, not at its next heartbeat), and still not someone else to her.
    await second.close({ runBeforeUnload: true })
    await expect.poll(adaEditors, shown).toBe(1)
    expect(await recordPage(g.page).editors.textContent()).toBe("Ada Lovelace is editing this record.")
    await recordPage(a.page).field("Amount").fill("5.00")
    await expect
      .poll(() => recordPage(g.page).editors.textContent(), shown)
      .toBe("Ada Lovelace is editing this record.")
    expect(await recordPage(a.page).editors.textContent()).toBe(nobody)
    await a.context.close()
    await g.context.close()
  })

  it("a record with 230 timeline rows shows all of them after 'Load older'", { timeout: 180_000 }, async () => {
    requireChromium()
    const deal = await create("crm/deal", { title: "Long history", amount: "0.00" })
    for (let i = 1; i < 230; i++) await Effect.runPromise(deals().update(deal.id, { amount: `${i}.00` }))
    const a = await openDeal(ada, deal.id)
    const rows = a.page.getByRole("list", { name: "Timeline entries" }).getByRole("article")
    const older = a.page.getByRole("button", { name: "Load older" })
    await expect.poll(() => rows.count(), shown).toBe(50)
    let clicks = 0
    while ((await rows.count()) < 230 && clicks < 10) {
      const before = await rows.count()
      await older.click()
      clicks++
      await expect.poll(() => rows.count(), shown).toBeGreaterThan(before)
    }
    expect(await rows.count()).toBe(230)
    expect(clicks).toBe(4)
    // The first entry is there, and nothing older is offered.
    expect(await rows.last().getByRole("heading").textContent()).toBe("Created by Ada Lovelace")
    await expect.poll(() => older.count(), shown).toBe(0)
    await a.context.close()
  })

  it("a reader sees the record read only: no edit controls", { timeout: 120_000 }, async () => {
    requireChromium()
    const deal = await create("crm/deal", { title: "Read me", stage: "open", amount: "10.00" })
    const r = await openDeal(reader, deal.id)
    const panel = r.page.getByRole("region", { name: "Record" })
    await panel.getByLabel("Title", { exact: true }).waitFor()
    expect(await panel.getByLabel("Title", { exact: true }).inputValue()).toBe("Read me")
    expect(await panel.getByRole("button").count()).toBe(0)
    expect(await r.page.getByRole("region", { name: "Record actions" }).count()).toBe(0)
    expect(await r.page.getByRole("form", { name: /^Edit / }).count()).toBe(0)
    for (const control of await panel.locator("input, select, textarea").all()) {
      expect(await control.isDisabled()).toBe(true)
    }
    // The list offers no "New deal" either.
    await r.page.getByRole("link", { name: "All deals" }).click()
    await r.page.getByRole("link", { name: "Read me" }).waitFor()
    expect(await r.page.getByRole("link", { name: "New deal" }).count()).toBe(0)
    await r.context.close()
  })

  it("an action, archive, restore and delete work from the page; a deleted link target shows as missing", {
    timeout: 120_000
  }, async () => {
    requireChromium()
    const gone = await create("crm/company", { name: "Gone Ltd" })
    const deal = await create("crm/deal", { title: "Lifecycle deal", stage: "open", company: gone.id })
    await Effect.runPromise(recordsOf(api, "crm/company").remove(gone.id))
    const a = await openDeal(ada, deal.id)
    const page = recordPage(a.page)
    const actions = a.page.getByRole("region", { name: "Record actions" })
    const state = a.page.locator(".page-title .state").first()

    // The link names a company deleted since: the page says so, by its last title.
    await expect
      .poll(() => page.field("Company").locator("option:checked").textContent(), shown)
      .toBe("Gone Ltd (deleted company)")

    await actions.getByRole("button", { name: "Close deal", exact: true }).click()
    await expect.poll(() => page.field("Stage").inputValue(), shown).toBe("won")
    await expect.poll(() => headings(a.page), shown).toEqual(["Updated by Ada Lovelace", "Created by Ada Lovelace"])

    await actions.getByRole("button", { name: "Archive" }).click()
    await expect.poll(() => state.textContent(), shown).toBe("Archived")
    expect(await a.page.getByRole("form", { name: /^Edit / }).count()).toBe(0)
    expect((await dealNow(deal.id)).state).toBe("archived")

    await actions.getByRole("button", { name: "Restore" }).click()
    // A live record has no state badge.
    await expect.poll(() => a.page.locator(".page-title .state").count(), shown).toBe(0)
    expect((await dealNow(deal.id)).state).toBe("operational")

    await actions.getByRole("button", { name: "Delete" }).click()
    await actions.getByRole("button", { name: "Yes, delete" }).click()
    await expect.poll(() => a.page.url(), shown).toBe(`${base}/records/crm/deal`)
    const after = await Effect.runPromise(Effect.result(deals().get(deal.id)))
    expect(after._tag === "Failure" ? after.failure.status : 200).toBe(404)
    await a.context.close()
  })

  it("'New deal' with the required title empty shows the error by the field and saves nothing", {
    timeout: 120_000
  }, async () => {
    requireChromium()
    const company = await create("crm/company", { name: "Picked Inc" })
    const context = await openContext()
    const page = await context.newPage()
    await signInThroughForm(page, base, ada)
    await page.goto(`${base}/records/crm/deal`)
    await page.getByRole("link", { name: "New deal" }).click()
    const form = page.getByRole("form", { name: "New deal" })
    const writes: Array<string> = []
    page.on("request", (request) => {
      if (request.method() !== "GET") writes.push(`${request.method()} ${request.url()}`)
    })
    const before = (await Effect.runPromise(deals().list())).body.records.length

    await form.getByLabel("Amount", { exact: true }).fill("42.00")
    await form.getByLabel("Stage", { exact: true }).selectOption("open")
    await form.getByRole("button", { name: "Create" }).click()
    const title = form.getByLabel("Title", { exact: true })
    await expect.poll(() => title.getAttribute("aria-invalid"), shown).toBe("true")
    expect(await form.locator(".field-error").allTextContents()).toEqual(["A value is required"])
    expect(writes).toEqual([])
    expect((await Effect.runPromise(deals().list())).body.records.length).toBe(before)

    // With a title (and a company picked from the live ones) it is created.
    await title.fill("Brand new")
    await form.getByLabel("Company", { exact: true }).selectOption({ label: "Picked Inc" })
    await form.getByRole("button", { name: "Create" }).click()
    await expect.poll(() => page.url(), shown).toMatch(/\/records\/crm\/deal\/[0-9a-f-]{36}$/)
    const id = page.url().split("/").at(-1) ?? ""
    expect((await dealNow(id)).values).toEqual({
      title: "Brand new",
      amount: "42.00",
      stage: "open",
      company: company.id
    })
    await context.close()
  })
})
