import { Effect } from "effect"
import type { Browser, BrowserContext, Locator, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Workspace } from "../../src/api/Workspace"
import { freshWorkspace } from "../support/TestApp"
import { clientFor, createRecord, recordsOf } from "../support/api"
import type { Client } from "../support/api"
import { signIn } from "../support/http"
import { chromiumInstalled, requireChromium } from "./support/chromium"
import { namedAdmin } from "./support/members"
import type { Person } from "./support/members"
import { recordPage, signInThroughForm } from "./support/pages"
import { pageContext, startPageHarness } from "./support/pageHarness"
import type { PageHarness } from "./support/pageHarness"

/**
 * History on the record page (docs/history.md) in Chromium against the real
 * service: a deal viewed as of an older entry (read only, marked, and back),
 * reverted to it from the timeline, the revert then on the timeline with
 * its cause; an undo of a field changed again since names it and is done
 * only when asked to undo anyway. Every wait is on a condition the page shows.
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
  const workspace: Workspace = await harness.run(freshWorkspace)
  ada = await harness.run(namedAdmin(workspace, "Ada Lovelace"))
  api = clientFor(base, await Effect.runPromise(signIn(base, ada)))
}, 240_000)

afterAll(async () => {
  await harness?.close()
}, 60_000)

const deals = () => recordsOf(api, "crm/deal")
const dealNow = async (id: string) => (await Effect.runPromise(deals().get(id))).body

/** A deal created, its amount changed, then its title changed: three entries. */
const dealWithHistory = async () => {
  const deal = await Effect.runPromise(createRecord(api, "crm/deal", { title: "Kiosk", amount: "100.00" }))
  await Effect.runPromise(deals().update(deal.id, { amount: "250.00" }))
  await Effect.runPromise(deals().update(deal.id, { title: "Kiosk rollout" }))
  return deal.id
}

const openDeal = async (id: string): Promise<{ page: Page; context: BrowserContext }> => {
  const context = await pageContext(browser)
  const page = await context.newPage()
  await signInThroughForm(page, base, ada)
  await page.goto(`${base}/records/crm/deal/${id}`)
  await recordPage(page).timelineRows.first().waitFor()
  return { page, context }
}

const headings = (page: Page) => recordPage(page).timelineRows.getByRole("heading").allTextContents()
const causeOf = (row: Locator) => row.locator(".cause").textContent()

describe("history on the record page (Chromium, PostgreSQL, Redis)", () => {
  it("views a deal as of an older entry, reverts it there, and sees the revert on the timeline with its cause", {
    timeout: 120_000
  }, async () => {
    requireChromium()
    const id = await dealWithHistory()
    const { page, context } = await openDeal(id)
    const record = recordPage(page)
    await expect
      .poll(() => headings(page), shown)
      .toEqual(["Updated by Ada Lovelace", "Updated by Ada Lovelace", "Created by Ada Lovelace"])
    const created = record.timelineRows.nth(2)

    // As of the creation: the old values, read only and marked; the form is out of sight.
    await created.getByRole("button", { name: "View as of this entry" }).click()
    const past = page.getByRole("region", { name: "Record as it was" })
    await past.waitFor(shown)
    expect(await past.getByRole("status").textContent()).toMatch(
      /^Read only: the past\. This deal, "Kiosk", as it was after the change by Ada Lovelace on /
    )
    await expect.poll(() => past.locator("dl").textContent(), shown).toBe("TitleKioskAmount100.00")
    expect(await record.form.isVisible()).toBe(false)
    expect(await past.getByRole("textbox").count()).toBe(0)

    // And back to the deal as it is.
    await past.getByRole("button", { name: "Back to the current deal" }).click()
    await record.form.waitFor(shown)
    expect(await past.count()).toBe(0)
    expect(await record.field("Title").inputValue()).toBe("Kiosk rollout")

    // Revert to the creation, confirmed.
    await created.getByRole("button", { name: "Revert to here" }).click()
    const confirm = page.getByRole("alertdialog", { name: "Revert to here?" })
    await confirm.getByRole("button", { name: "Yes, revert" }).click()
    await expect.poll(() => record.field("Title").inputValue(), shown).toBe("Kiosk")
    expect(await record.field("Amount").inputValue()).toBe("100.00")
    await expect.poll(() => record.timelineRows.count(), shown).toBe(4)
    const revert = record.timelineRows.first()
    expect(await revert.getByRole("heading").textContent()).toBe("Updated by Ada Lovelace")
    expect(await causeOf(revert)).toMatch(/^reverted to "Created by Ada Lovelace" of /)
    expect(await revert.textContent()).toContain("Kiosk rollout")
    const now = await dealNow(id)
    expect([now.values, now.version]).toEqual([{ title: "Kiosk", amount: "100.00" }, 4])
    await context.close()
  })

  it("an undo of a field changed again since names it, and undoes it only when asked to undo anyway", {
    timeout: 120_000
  }, async () => {
    requireChromium()
    const id = await dealWithHistory()
    await Effect.runPromise(deals().update(id, { amount: "999.00" }))
    const { page, context } = await openDeal(id)
    const record = recordPage(page)
    await expect.poll(() => record.timelineRows.count(), shown).toBe(4)
    // Newest first: amount 999.00, title, amount 250.00, created.
    const amountChange = record.timelineRows.nth(2)
    await amountChange.getByRole("button", { name: "Undo this change" }).click()
    await page
      .getByRole("alertdialog", { name: "Undo this change?" })
      .getByRole("button", { name: "Yes, undo" })
      .click()
    const changedSince = page.getByRole("alertdialog", { name: "Changed again since" })
    await changedSince.waitFor(shown)
    expect(await changedSince.textContent()).toMatch(/^Not undone: Amount was changed again since\./)
    expect((await dealNow(id)).version).toBe(4)

    await changedSince.getByRole("button", { name: "Undo anyway" }).click()
    await expect.poll(() => record.field("Amount").inputValue(), shown).toBe("100.00")
    expect(await record.field("Title").inputValue()).toBe("Kiosk rollout")
    await expect.poll(() => record.timelineRows.count(), shown).toBe(5)
    expect(await causeOf(record.timelineRows.first())).toMatch(/^undid "Updated by Ada Lovelace" of /)
    expect(await changedSince.count()).toBe(0)
    await context.close()
  })
})
