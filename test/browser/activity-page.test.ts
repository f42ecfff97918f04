import { Effect } from "effect"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Workspace } from "../../src/api/Workspace"
import { freshWorkspace } from "../support/TestApp"
import { clientFor, createRecord, recordsOf } from "../support/api"
import type { Client } from "../support/api"
import { signIn } from "../support/http"
import { chromiumInstalled, requireChromium } from "./support/chromium"
import { namedAdmin } from "./support/members"
import type { Person } from "./support/members"
import { signInThroughForm } from "./support/pages"
import { startPageHarness } from "./support/pageHarness"
import type { PageHarness } from "./support/pageHarness"

/**
 * The Activity page of issues 18 and 25 in Chromium against the real
 * service: newest first, live (another client's change at the top without a
 * reload), each row with what changed, filters that narrow it and live in
 * the URL; the unit-of-work page draws the CRM's `close` cascade as a tree
 * with each row's changes. Every wait is on a condition the page shows.
 */

const shown = { timeout: 10_000, interval: 100 }
/** The acceptance point of issue 25: another client's change at the top of Activity within 2 s. */
const live = { timeout: 2_000, interval: 50 }

let harness: PageHarness | undefined
let browser: Browser | undefined
let base = ""
let ada: Person
let grace: Person
let asAda: Client
let asGrace: Client
let adaCompany = ""
let graceCompany = ""
let adaDeal = ""

beforeAll(async () => {
  if (!chromiumInstalled()) return
  harness = await startPageHarness()
  browser = harness.browser
  base = harness.base
  const run = harness.run
  const workspace: Workspace = await run(freshWorkspace)
  ada = await run(namedAdmin(workspace, "Ada Lovelace"))
  grace = await run(namedAdmin(workspace, "Grace Hopper"))
  asAda = clientFor(base, await Effect.runPromise(signIn(base, ada)))
  asGrace = clientFor(base, await Effect.runPromise(signIn(base, grace)))
  adaCompany = (await Effect.runPromise(createRecord(asAda, "crm/company", { name: "Ada's company" }))).id
  graceCompany = (await Effect.runPromise(createRecord(asGrace, "crm/company", { name: "Grace's company" }))).id
  adaDeal = (await Effect.runPromise(createRecord(asAda, "crm/deal", { title: "Ada's deal", company: adaCompany }))).id
}, 240_000)

afterAll(async () => {
  await harness?.close()
}, 60_000)

const openActivity = async (query = "") => {
  if (browser === undefined) throw new Error("no browser")
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: "en-GB" })
  const page = await context.newPage()
  await signInThroughForm(page, base, ada)
  if (query === "") await page.getByRole("link", { name: "Activity" }).click()
  else await page.goto(`${base}/activity${query}`)
  return { context, page }
}

const activity = (page: Page) => {
  const rows = page.getByRole("list", { name: "Changes, newest first" }).locator(":scope > li")
  return {
    rows,
    whats: () => rows.locator(".what").allTextContents(),
    whos: () => rows.locator(".who").allTextContents(),
    top: async () => {
      const first = rows.first()
      return `${await first.locator(".what").textContent()} ${await first.locator(".who").textContent()}`
    }
  }
}

const update = (client: Client, businessObject: string, id: string, values: Record<string, unknown>) =>
  Effect.runPromise(recordsOf(client, businessObject).update(id, values).pipe(Effect.orDie))

describe("the Activity page (Chromium, PostgreSQL, Redis)", () => {
  it("opens on the newest change, with what changed; another client's change appears at the top without a reload", {
    timeout: 120_000
  }, async () => {
    requireChromium()
    const { context, page } = await openActivity()
    const list = activity(page)
    await expect
      .poll(list.whats, shown)
      .toEqual([
        expect.stringMatching(/^Created deal /),
        expect.stringMatching(/^Created company /),
        expect.stringMatching(/^Created company /)
      ])
    expect(await list.whos()).toEqual(["by Ada Lovelace", "by Grace Hopper", "by Ada Lovelace"])
    // What was set, under the row.
    expect(await list.rows.first().locator(".snapshot").textContent()).toContain("Ada's deal")
    expect(await page.getByRole("button", { name: "Check for newer" }).count()).toBe(0)
    // Set once; a reload would lose it.
    await page.evaluate(() => {
      document.documentElement.dataset.loadedOnce = "yes"
    })

    const sent = performance.now()
    await update(asGrace, "crm/deal", adaDeal, { title: "Ada's deal, renamed by Grace" })
    await expect.poll(list.top, live).toMatch(/^Updated deal .* by Grace Hopper$/)
    // Reported, not asserted beyond the 2 s above: the save's own round trip included.
    console.log(
      `another client's change at the top of Activity ${Math.round(performance.now() - sent)} ms after its save was sent`
    )
    const changes = list.rows.first().locator(".changes")
    expect(await changes.locator("dt").allTextContents()).toEqual(["Title"])
    expect(await changes.locator("dd").textContent()).toBe("Ada's deal → Ada's deal, renamed by Grace")
    expect(await list.rows.count()).toBe(4)
    expect(await page.evaluate(() => document.documentElement.dataset.loadedOnce)).toBe("yes")
    await context.close()
  })

  it("filters by actor, business object and record narrow it, live too, and a link opens it narrowed", {
    timeout: 120_000
  }, async () => {
    requireChromium()
    const { context, page } = await openActivity()
    const list = activity(page)
    await expect.poll(() => list.rows.count(), shown).toBeGreaterThanOrEqual(4)

    await page.getByLabel("Actor", { exact: true }).selectOption({ label: "Grace Hopper" })
    await expect.poll(list.whos, shown).toEqual(["by Grace Hopper", "by Grace Hopper"])
    expect(new URL(page.url()).searchParams.get("actor")).not.toBeNull()
    await page.getByLabel("Business object", { exact: true }).selectOption({ label: "Companies" })
    await expect.poll(list.whats, shown).toEqual([expect.stringMatching(/^Created company /)])

    // The narrowed page as a link: opened afresh, it is narrowed the same.
    const linked = page.url()
    await page.goto(linked)
    await expect.poll(list.whats, shown).toEqual([expect.stringMatching(/^Created company /)])
    expect(await page.getByLabel("Business object", { exact: true }).inputValue()).toBe("crm/company")

    // Live under the filters: Grace's deal change stays out, her company change comes in at the top.
    await update(asGrace, "crm/deal", adaDeal, { title: "Not shown here" })
    await update(asGrace, "crm/company", graceCompany, { name: "Grace's company, renamed" })
    await expect.poll(list.top, live).toMatch(/^Updated company .* by Grace Hopper$/)
    expect(await list.whats()).toEqual([
      expect.stringMatching(/^Updated company /),
      expect.stringMatching(/^Created company /)
    ])

    // One record's changes: "only this" on the newest row of Ada's deal (each of its rows names it by its title).
    await page.goto(`${base}/activity`)
    await expect.poll(() => list.rows.count(), shown).toBeGreaterThanOrEqual(6)
    await list.rows.filter({ hasText: "Not shown here" }).first().getByRole("button", { name: "only this" }).click()
    await expect.poll(() => new URL(page.url()).searchParams.get("record"), shown).toBe(adaDeal)
    await expect
      .poll(list.whats, shown)
      .toEqual([
        expect.stringMatching(/^Updated deal /),
        expect.stringMatching(/^Updated deal /),
        expect.stringMatching(/^Created deal /)
      ])
    // Clicking an actor's name narrows by them too.
    await list.rows.first().getByRole("button", { name: "Grace Hopper" }).click()
    await expect.poll(list.whos, shown).toEqual(["by Grace Hopper", "by Grace Hopper"])
    await context.close()
  })

  it("the unit-of-work page of a close: titled by what happened, the cascade as a tree, each row with its changes", {
    timeout: 120_000
  }, async () => {
    requireChromium()
    await Effect.runPromise(recordsOf(asAda, "crm/deal").action("close", adaDeal).pipe(Effect.orDie))
    const { context, page } = await openActivity()
    const list = activity(page)
    await expect.poll(list.top, shown).toMatch(/^Created activity /)
    await list.rows.first().getByRole("link", { name: "unit of work" }).click()

    const heading = page.getByRole("heading", { level: 1 })
    await expect.poll(() => heading.textContent(), shown).toMatch(/^Updated deal .* by Ada Lovelace$/)
    const tree = page.getByRole("list", { name: "What happened" })
    const level = (locator: ReturnType<Page["locator"]>) => locator.locator(":scope > li")
    // deal won -> the company's won deals -> an activity, each nested under its cause.
    const deal = level(tree)
    await expect.poll(() => deal.count(), shown).toBe(1)
    expect(await deal.locator(":scope > .activity-line .what").textContent()).toMatch(/^Updated deal /)
    expect(await deal.locator(":scope > .changes dt").allTextContents()).toEqual(["Stage"])
    expect(await deal.locator(":scope > .changes dd").textContent()).toMatch(/→ won$/i)
    const company = level(deal.locator(":scope > ol"))
    expect(await company.count()).toBe(1)
    expect(await company.locator(":scope > .activity-line .what").textContent()).toMatch(/^Updated company /)
    expect(await company.locator(":scope > .changes dt").allTextContents()).toEqual(["Won deals"])
    const logged = level(company.locator(":scope > ol"))
    expect(await logged.count()).toBe(1)
    expect(await logged.locator(":scope > .activity-line .what").textContent()).toMatch(/^Created activity /)
    expect(await logged.locator(":scope > .snapshot").textContent()).toContain("Ada's company has won 1 deal")

    // Rows link to their records, never to this page.
    const hrefs = await tree.locator("a").evaluateAll((links) => links.map((link) => link.getAttribute("href")))
    expect(hrefs.length).toBeGreaterThan(0)
    for (const href of hrefs) expect(href).toMatch(/^\/records\//)
    await context.close()
  })
})
