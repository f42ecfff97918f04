import { Effect } from "effect"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Workspace } from "../../src/api/Workspace"
import { freshWorkspace } from "../support/TestApp"
import { clientFor, createRecord } from "../support/api"
import type { Client } from "../support/api"
import { signIn } from "../support/http"
import { chromiumInstalled, requireChromium } from "./support/chromium"
import { namedAdmin } from "./support/members"
import type { Person } from "./support/members"
import { signInThroughForm } from "./support/pages"
import { pageContext, startPageHarness } from "./support/pageHarness"
import type { PageHarness } from "./support/pageHarness"

/**
 * Lists and backlinks in Chromium against the real service (issue 25,
 * item 3): a company page lists its deals and activities; the deal list
 * sorts by amount both ways and filters by stage, showing exactly the
 * expected rows in order, with its state in the URL. Every wait is on a
 * condition the page shows.
 */

const shown = { timeout: 10_000, interval: 100 }

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
  const run = harness.run
  const workspace: Workspace = await run(freshWorkspace)
  ada = await run(namedAdmin(workspace, "Ada Lovelace"))
  api = clientFor(base, await Effect.runPromise(signIn(base, ada)))
}, 240_000)

afterAll(async () => {
  await harness?.close()
}, 60_000)

const create = (businessObject: string, values: Readonly<Record<string, unknown>>) =>
  Effect.runPromise(createRecord(api, businessObject, values))

const openAs = async (person: Person, path: string): Promise<Page> => {
  const context = await pageContext(browser)
  const page = await context.newPage()
  await signInThroughForm(page, base, person)
  await page.goto(`${base}${path}`)
  return page
}

/** The titles in the first column of the list, top to bottom. */
const rows = (page: Page) =>
  page.getByRole("table", { name: "Deals" }).locator("tbody tr td:first-child a").allTextContents()

describe("lists and backlinks (Chromium, PostgreSQL, Redis)", () => {
  it("a company page lists its deals and activities, each linking to its record by title", {
    timeout: 120_000
  }, async () => {
    requireChromium()
    const acme = await create("crm/company", { name: "Acme Backlinks" })
    const other = await create("crm/company", { name: "Other Backlinks" })
    const kiosk = await create("crm/deal", { title: "Acme kiosk", stage: "open", company: acme.id })
    await create("crm/deal", { title: "Acme rollout", stage: "won", company: acme.id })
    await create("crm/deal", { title: "Not Acme's", stage: "open", company: other.id })
    await create("crm/activity", { subject: "Called Acme", company: acme.id, deal: kiosk.id })

    const page = await openAs(ada, `/records/crm/company/${acme.id}`)
    const linked = page.getByRole("region", { name: "Linked records" })
    const deals = linked.getByRole("region", { name: "Deals" })
    await expect.poll(() => deals.getByRole("link").allTextContents(), shown).toEqual(["Acme rollout", "Acme kiosk"])
    await expect
      .poll(() => linked.getByRole("region", { name: "Activities" }).getByRole("link").allTextContents(), shown)
      .toEqual(["Called Acme"])

    // A deal's page lists its activities; the link opens the deal by its title.
    await deals.getByRole("link", { name: "Acme kiosk" }).click()
    await page.getByRole("heading", { name: "Deal: Acme kiosk" }).waitFor(shown)
    await expect
      .poll(
        () =>
          page
            .getByRole("region", { name: "Linked records" })
            .getByRole("region", { name: "Activities" })
            .getByRole("link")
            .allTextContents(),
        shown
      )
      .toEqual(["Called Acme"])
    await page.context().close()
  })

  it("the deal list sorts by amount both ways and filters by stage: exactly the expected rows, in order", {
    timeout: 120_000
  }, async () => {
    requireChromium()
    const deals = [
      { title: "List alpha", stage: "won", amount: "900.50" },
      { title: "List beta", stage: "open", amount: "12000" },
      { title: "List gamma", stage: "won", amount: "15000.00" },
      { title: "List delta", stage: "won", amount: "80" },
      { title: "List epsilon", stage: "lost", amount: "5000" }
    ]
    for (const values of deals) await create("crm/deal", values)
    const page = await openAs(ada, "/records/crm/deal?q=list")
    await expect.poll(() => rows(page), shown).toHaveLength(5)

    const amount = page.getByRole("columnheader", { name: "Amount" })
    await amount.getByRole("button").click()
    await expect.poll(() => amount.getAttribute("aria-sort"), shown).toBe("ascending")
    await expect
      .poll(() => rows(page), shown)
      .toEqual(["List delta", "List alpha", "List epsilon", "List beta", "List gamma"])

    await page.getByLabel("Stage").selectOption("won")
    await expect.poll(() => rows(page), shown).toEqual(["List delta", "List alpha", "List gamma"])

    await amount.getByRole("button").click()
    await expect.poll(() => amount.getAttribute("aria-sort"), shown).toBe("descending")
    await expect.poll(() => rows(page), shown).toEqual(["List gamma", "List alpha", "List delta"])

    // The state is in the address: a reload shows the same rows.
    const url = new URL(page.url())
    expect(Object.fromEntries(url.searchParams)).toEqual({ sort: "amount", order: "desc", stage: "won", q: "list" })
    await page.reload()
    await expect.poll(() => rows(page), shown).toEqual(["List gamma", "List alpha", "List delta"])

    // Search narrows the titles.
    const search = page.getByRole("searchbox", { name: "Search deals" })
    await search.fill("gam")
    await search.press("Enter")
    await expect.poll(() => rows(page), shown).toEqual(["List gamma"])
    await page.context().close()
  })
})
