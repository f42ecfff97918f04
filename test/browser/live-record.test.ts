import { Effect, type Scope } from "effect"
import { readFile, rename } from "node:fs/promises"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Workspace } from "../../src/api/Workspace"
import { freshWorkspace } from "../support/TestApp"
import { clientFor, createRecord, recordsOf } from "../support/api"
import { signIn } from "../support/http"
import { chromiumInstalled, requireChromium } from "./support/chromium"
import { namedAdmin } from "./support/members"
import type { Person } from "./support/members"
import { recordPage, signInThroughForm } from "./support/pages"
import { pageContext, startPageHarness } from "./support/pageHarness"
import type { AppServices, PageHarness } from "./support/pageHarness"

/**
 * The web page in a real browser (Debian's Chromium, headless) against the
 * real service on PostgreSQL and Redis: two browser contexts are two people
 * with the same deal open. Every wait is on a condition the page shows,
 * never a fixed sleep; what "live" means is that A's page never reloads.
 *
 * A lapse takes three heartbeat intervals (30 s) and A's editor list
 * refetches every 10 s: so B showing up or leaving within `live` (8 s) of
 * what B did can only come from the presence broadcast.
 */

const live = { timeout: 8_000, interval: 100 }
/**
 * Every run takes the screenshot into `test-results/` (git-ignored);
 * `UPDATE_SCREENSHOT=1 npm test` refreshes the one the README shows.
 */
const screenshotPath =
  process.env.UPDATE_SCREENSHOT === "1" ? "docs/screenshot-timeline.png" : "test-results/screenshot-timeline.png"

const dealValues = {
  title: "Kiosk rollout",
  stage: "negotiation",
  amount: "1200.00",
  closeDate: "2026-12-15",
  address: { street: "1 Harbour Road", city: "Oslo", country: "Norway" },
  lineItems: [
    { id: "li-kiosk", product: "Kiosk", quantity: 2, price: "450.00" },
    { id: "li-install", product: "Installation", quantity: 1, price: "300.00" }
  ]
}

let harness: PageHarness | undefined
let browser: Browser | undefined
let base = ""
let ada: Person
let grace: Person
let dealId = ""

const run = <A, E>(effect: Effect.Effect<A, E, AppServices | Scope.Scope>) => {
  if (harness === undefined) throw new Error("not set up")
  return harness.run(effect)
}

beforeAll(async () => {
  // Without a browser there is nothing to set up: the test itself fails, naming the package (never a skip).
  if (!chromiumInstalled()) return
  harness = await startPageHarness()
  browser = harness.browser
  base = harness.base
  const workspace: Workspace = await run(freshWorkspace)
  const person = (name: string) => run(namedAdmin(workspace, name))
  ada = await person("Ada Lovelace")
  grace = await person("Grace Hopper")

  // The deal's history before the browsers open: created, then an update of
  // a collection (one entry modified, one added) and a date, all by Ada.
  const cookie = await Effect.runPromise(signIn(base, ada))
  const api = clientFor(base, cookie)
  const company = await Effect.runPromise(createRecord(api, "crm/company", { name: "Acme Foods" }))
  dealId = (await Effect.runPromise(createRecord(api, "crm/deal", { ...dealValues, company: company.id }))).id
  await Effect.runPromise(
    recordsOf(api, "crm/deal").update(dealId, {
      closeDate: "2027-01-10",
      lineItems: [
        { id: "li-kiosk", product: "Kiosk", quantity: 3, price: "450.00" },
        { id: "li-install", product: "Installation", quantity: 1, price: "300.00" },
        { id: "li-support", product: "Support plan", quantity: 1, price: "120.00" }
      ]
    })
  )
}, 240_000)

afterAll(async () => {
  await harness?.close()
}, 60_000)

/** A browser context of its own (its own cookies: another person), in one locale and zone for a stable screenshot. */
const openContext = (): Promise<BrowserContext> => pageContext(browser)

/** What Chromium reported as blocked by a page's Content-Security-Policy (docs/security.md). */
const cspViolations: Array<string> = []
const watchCsp = (page: Page) =>
  page.on("console", (message) => {
    if (/Content.Security.Policy/i.test(message.text())) cspViolations.push(`${page.url()}: ${message.text()}`)
  })

/** Signs `person` in through the form and opens the deal from the list, as a person would. */
const openDeal = async (context: BrowserContext, person: Person): Promise<Page> => {
  const page = await context.newPage()
  watchCsp(page)
  await signInThroughForm(page, base, person)
  await page.getByRole("navigation", { name: "Business objects" }).getByRole("link", { name: "Deals" }).click()
  await page.getByRole("link", { name: "Kiosk rollout" }).click()
  await recordPage(page).timelineRows.first().waitFor()
  return page
}

describe("the web page, two people on one deal (Chromium, PostgreSQL, Redis)", () => {
  it("B's editing, saving and leaving show up live on A's page", { timeout: 180_000 }, async () => {
    requireChromium()
    const contextA = await openContext()
    const contextB = await openContext()
    const pageA = await openDeal(contextA, ada)
    const pageB = await openDeal(contextB, grace)
    const a = recordPage(pageA)
    const b = recordPage(pageB)
    // Set once; a reload of A's page would lose it.
    await pageA.evaluate(() => {
      document.documentElement.dataset.loadedOnce = "yes"
    })

    expect(pageA.url()).toBe(`${base}/records/crm/deal/${dealId}`)
    expect(await a.timelineRows.count()).toBe(2)
    expect(await a.timelineRows.first().getByRole("heading").textContent()).toBe("Updated by Ada Lovelace")
    expect(await a.field("Amount").inputValue()).toBe("1200.00")
    expect(await a.editors.textContent()).toBe("Nobody else is editing this record.")

    // B starts editing: unsaved changes make B's form an editor; A sees B arrive.
    await b.field("Amount").fill("1350.00")
    await expect.poll(() => a.editors.textContent(), live).toBe("Grace Hopper is editing this record.")
    // B's own form is not "someone else" to B.
    expect(await b.editors.textContent()).toBe("Nobody else is editing this record.")

    // More of B's edits: a struct member, a collection entry removed and one added.
    await b.group("Address").getByLabel("City", { exact: true }).fill("Bergen")
    await b.form.getByRole("button", { name: "Remove Line items 2" }).click()
    await b.form.getByRole("button", { name: "Add to line items" }).click()
    const added = b.group("Line items 3")
    await added.getByLabel("Product", { exact: true }).fill("Stand")
    await added.getByLabel("Quantity", { exact: true }).fill("1")
    await added.getByLabel("Price", { exact: true }).fill("80.00")
    await b.save.click()
    await expect.poll(() => b.saveStatus.textContent(), live).toBe("Saved")

    // A's page refetches on the `changed` broadcast: the new values and a new timeline row, no reload.
    await expect.poll(() => a.field("Amount").inputValue(), live).toBe("1350.00")
    expect(await a.group("Address").getByLabel("City", { exact: true }).inputValue()).toBe("Bergen")
    await expect.poll(() => a.timelineRows.count(), live).toBe(3)
    const newest = a.timelineRows.first()
    expect(await newest.getByRole("heading").textContent()).toBe("Updated by Grace Hopper")
    const newestText = (await newest.textContent()) ?? ""
    for (const shown of [
      "1200.00",
      "1350.00",
      "Oslo",
      "Bergen",
      "added",
      "Stand",
      "removed",
      "Installation",
      "direct edit"
    ]) {
      expect(newestText, shown).toContain(shown)
    }
    // Saving ended B's editing.
    await expect.poll(() => a.editors.textContent(), live).toBe("Nobody else is editing this record.")

    // B edits again, and A sees it again: the moment the screenshot shows.
    await b.field("Stage").selectOption("proposal")
    await expect.poll(() => a.editors.textContent(), live).toBe("Grace Hopper is editing this record.")
    const shot = `${screenshotPath}.${process.pid}.tmp`
    await pageA.screenshot({ path: shot, type: "png", fullPage: true })
    await rename(shot, screenshotPath)
    expect((await readFile(screenshotPath)).subarray(1, 4).toString("latin1")).toBe("PNG")

    // B closes the tab with unsaved changes: `pagehide` sends the leave (keepalive); A sees B go.
    await pageB.close({ runBeforeUnload: true })
    await expect.poll(() => a.editors.textContent(), live).toBe("Nobody else is editing this record.")

    expect(await pageA.evaluate(() => document.documentElement.dataset.loadedOnce)).toBe("yes")
    // All of it ran under the page's Content-Security-Policy without a thing blocked.
    expect(cspViolations).toEqual([])
    await contextA.close()
    await contextB.close()
  })

  it("the API reference at /api/docs renders under its Content-Security-Policy, nothing blocked", {
    timeout: 60_000
  }, async () => {
    requireChromium()
    const context = await openContext()
    const page = await context.newPage()
    const violations: Array<string> = []
    page.on("console", (message) => {
      if (/Content.Security.Policy/i.test(message.text())) violations.push(message.text())
    })
    await page.goto(`${base}/api/docs`)
    await page.getByText("/api/records/crm/deal/{id}", { exact: true }).first().waitFor()
    expect(violations).toEqual([])
    await context.close()
  })
})
