import { Effect } from "effect"
import type { Browser, BrowserContext, Page } from "playwright-core"
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
 * The smaller points of issue 25 in Chromium against the real service: a
 * clean console signed out and signed in, no "Revert to here" on the
 * newest row, the conflict panel in sight when a save is refused, a
 * person's other device named "you, on another device", and "Follow up"
 * saying it was queued. Every wait is on a condition the page shows.
 */

const shown = { timeout: 10_000, interval: 100 }

let harness: PageHarness | undefined
let browser: Browser | undefined
let base = ""
let ada: Person
let grace: Person
let api: Client

beforeAll(async () => {
  if (!chromiumInstalled()) return
  harness = await startPageHarness()
  browser = harness.browser
  base = harness.base
  const workspace: Workspace = await harness.run(freshWorkspace)
  ada = await harness.run(namedAdmin(workspace, "Ada Lovelace"))
  grace = await harness.run(namedAdmin(workspace, "Grace Hopper"))
  api = clientFor(base, await Effect.runPromise(signIn(base, ada)))
}, 240_000)

afterAll(async () => {
  await harness?.close()
}, 60_000)

const openContext = (viewport?: { width: number; height: number }): Promise<BrowserContext> =>
  pageContext(browser, viewport)

const deals = () => recordsOf(api, "crm/deal")
const createDeal = (values: Readonly<Record<string, unknown>>) =>
  Effect.runPromise(createRecord(api, "crm/deal", values))

const openDeal = async (page: Page, id: string) => {
  await page.goto(`${base}/records/crm/deal/${id}`)
  await recordPage(page).timelineRows.first().waitFor(shown)
}

/** Every console error and every failed or refused (4xx/5xx) request of `page`, from now on. */
const watchProblems = (page: Page) => {
  const problems: Array<string> = []
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()}`)
  })
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`))
  page.on("requestfailed", (request) => {
    // A stream or a keepalive cut short by a navigation is the page leaving, not a failure.
    const reason = request.failure()?.errorText ?? ""
    if (reason !== "net::ERR_ABORTED") problems.push(`failed: ${request.method()} ${request.url()} ${reason}`)
  })
  page.on("response", (response) => {
    if (response.status() >= 400)
      problems.push(`${response.status()}: ${response.request().method()} ${response.url()}`)
  })
  return problems
}

describe("the smaller points of issue 25 (Chromium, PostgreSQL, Redis)", () => {
  it("a fresh load logs no console error and no failed request, signed out and signed in", {
    timeout: 120_000
  }, async () => {
    requireChromium()
    const deal = await createDeal({ title: "Quiet deal", amount: "10.00", closeDate: "2026-12-15" })
    const context = await openContext()
    const page = await context.newPage()
    const problems = watchProblems(page)
    await page.goto(`${base}/`)
    await page.getByRole("button", { name: "Sign in" }).waitFor(shown)
    expect(problems).toEqual([])

    await signInThroughForm(page, base, ada)
    await page.reload()
    await page.getByText(`Signed in as ${ada.name}`).waitFor(shown)
    await openDeal(page, deal.id)
    await page.reload()
    await recordPage(page).timelineRows.first().waitFor(shown)
    await expect.poll(() => recordPage(page).field("Title").inputValue(), shown).toBe("Quiet deal")
    expect(problems).toEqual([])
    await context.close()
  })

  it("'Revert to here' is offered on older rows, not on the newest (it would change nothing)", {
    timeout: 120_000
  }, async () => {
    requireChromium()
    const deal = await createDeal({ title: "Revert rows", amount: "1.00" })
    await Effect.runPromise(deals().update(deal.id, { amount: "2.00" }))
    const context = await openContext()
    const page = await context.newPage()
    await signInThroughForm(page, base, ada)
    await openDeal(page, deal.id)
    const rows = recordPage(page).timelineRows
    await expect.poll(() => rows.count(), shown).toBe(2)
    const revertIn = (index: number) => rows.nth(index).getByRole("button", { name: "Revert to here" }).count()
    expect(await rows.nth(0).getByRole("button", { name: "View as of this entry" }).count()).toBe(1)
    expect(await revertIn(0)).toBe(0)
    expect(await revertIn(1)).toBe(1)
    // Another change makes the old newest row an older one: it offers the revert now.
    await Effect.runPromise(deals().update(deal.id, { amount: "3.00" }))
    await expect.poll(() => rows.count(), shown).toBe(3)
    await expect.poll(() => revertIn(1), shown).toBe(1)
    expect(await revertIn(0)).toBe(0)
    await context.close()
  })

  it("a refused save shows the conflict panel where the person is looking, focused", { timeout: 120_000 }, async () => {
    requireChromium()
    const deal = await createDeal({ title: "Long form", amount: "1.00" })
    // A short window: the form is longer than it, as a long form is on any screen.
    const context = await openContext({ width: 1280, height: 480 })
    const page = await context.newPage()
    await signInThroughForm(page, base, ada)
    await openDeal(page, deal.id)
    const form = recordPage(page)
    await form.field("Title").fill("Mine")
    await Effect.runPromise(deals().update(deal.id, { amount: "2.00" }))
    // Saved from the first field (Enter): the person looks at the top of the form.
    await form.field("Title").press("Enter")
    const conflict = page.getByRole("alert").filter({ hasText: "Changed since you opened it" })
    await conflict.waitFor(shown)
    const inView = () =>
      conflict.evaluate((element) => {
        const box = element.getBoundingClientRect()
        return box.top >= 0 && box.top < window.innerHeight
      })
    await expect.poll(inView, shown).toBe(true)
    expect(await conflict.evaluate((element) => element === document.activeElement)).toBe(true)
    await context.close()
  })

  it("presence: the same user on another device reads 'you, on another device', never their own name", {
    timeout: 120_000
  }, async () => {
    requireChromium()
    const deal = await createDeal({ title: "Two devices" })
    // Two browser contexts: two devices (each its own editor id); Grace is someone else.
    const laptop = await openContext()
    const phone = await openContext()
    const other = await openContext()
    const onLaptop = await laptop.newPage()
    const onPhone = await phone.newPage()
    const onGrace = await other.newPage()
    for (const [page, person] of [
      [onLaptop, ada],
      [onPhone, ada],
      [onGrace, grace]
    ] as const) {
      await signInThroughForm(page, base, person)
      await openDeal(page, deal.id)
    }
    await recordPage(onLaptop).field("Title").fill("From the laptop")
    await expect
      .poll(() => recordPage(onPhone).editors.textContent(), shown)
      .toBe("You, on another device, are editing this record.")
    await expect
      .poll(() => recordPage(onGrace).editors.textContent(), shown)
      .toBe("Ada Lovelace is editing this record.")
    expect(await recordPage(onLaptop).editors.textContent()).toBe("Nobody else is editing this record.")
    await recordPage(onGrace).field("Amount").fill("7.00")
    await expect
      .poll(() => recordPage(onPhone).editors.textContent(), shown)
      .toBe("Grace Hopper and you, on another device, are editing this record.")
    await expect
      .poll(() => recordPage(onLaptop).editors.textContent(), shown)
      .toBe("Grace Hopper is editing this record.")
    for (const context of [laptop, phone, other]) await context.close()
  })

  it("'Follow up' says that it was queued", { timeout: 120_000 }, async () => {
    requireChromium()
    const deal = await createDeal({ title: "Follow me" })
    const context = await openContext()
    const page = await context.newPage()
    await signInThroughForm(page, base, ada)
    await openDeal(page, deal.id)
    await page.getByRole("button", { name: "Follow up" }).click()
    const outcome = page.getByRole("status", { name: "Action outcome" })
    await expect.poll(() => outcome.textContent(), shown).toMatch(/^Follow up: queued\. It runs in the background/)
    await context.close()
  })
})
