import { Effect } from "effect"
import type { Browser } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Workspace } from "../../src/api/Workspace"
import { freshWorkspace } from "../support/TestApp"
import { clientFor, createRecord } from "../support/api"
import { signIn } from "../support/http"
import { chromiumInstalled, requireChromium } from "./support/chromium"
import { namedAdmin } from "./support/members"
import type { Person } from "./support/members"
import { signInThroughForm } from "./support/pages"
import { startPageHarness } from "./support/pageHarness"
import type { PageHarness } from "./support/pageHarness"

/**
 * The Activity page of issue 18 in Chromium against the real service: the
 * workspace feed with its filters; choosing an actor leaves only that
 * actor's changes; a row links to its unit of work, whose view lists it.
 * Every wait is on a condition the page shows.
 */

const shown = { timeout: 10_000, interval: 100 }

let harness: PageHarness | undefined
let browser: Browser | undefined
let base = ""
let ada: Person
let grace: Person

beforeAll(async () => {
  if (!chromiumInstalled()) return
  harness = await startPageHarness()
  browser = harness.browser
  base = harness.base
  const run = harness.run
  const workspace: Workspace = await run(freshWorkspace)
  ada = await run(namedAdmin(workspace, "Ada Lovelace"))
  grace = await run(namedAdmin(workspace, "Grace Hopper"))
  const asAda = clientFor(base, await Effect.runPromise(signIn(base, ada)))
  const asGrace = clientFor(base, await Effect.runPromise(signIn(base, grace)))
  await Effect.runPromise(createRecord(asAda, "crm/company", { name: "Ada's company" }))
  await Effect.runPromise(createRecord(asGrace, "crm/company", { name: "Grace's company" }))
  await Effect.runPromise(createRecord(asAda, "crm/deal", { title: "Ada's deal" }))
}, 240_000)

afterAll(async () => {
  await harness?.close()
}, 60_000)

describe("the Activity page (Chromium, PostgreSQL, Redis)", () => {
  it("lists the workspace's changes; filtering by actor leaves only theirs; a row opens its unit of work", {
    timeout: 120_000
  }, async () => {
    requireChromium()
    if (browser === undefined) throw new Error("no browser")
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: "en-GB" })
    const page = await context.newPage()
    await signInThroughForm(page, base, ada)
    await page.getByRole("link", { name: "Activity" }).click()
    const rows = page.getByRole("list", { name: "Changes, oldest first" }).getByRole("listitem")
    const whos = () => rows.locator(".who").allTextContents()
    await expect.poll(whos, shown).toEqual(["by Ada Lovelace", "by Grace Hopper", "by Ada Lovelace"])

    await page.getByLabel("Actor", { exact: true }).selectOption({ label: "Grace Hopper" })
    await expect.poll(whos, shown).toEqual(["by Grace Hopper"])
    await expect
      .poll(() => rows.locator(".what").allTextContents(), shown)
      .toEqual([expect.stringMatching(/^Created company /)])

    await page.getByLabel("Actor", { exact: true }).selectOption({ label: "Anyone" })
    await page.getByLabel("Business object", { exact: true }).selectOption({ label: "Deals" })
    await expect.poll(whos, shown).toEqual(["by Ada Lovelace"])
    // Clicking an actor's name filters by them too.
    await page.getByLabel("Business object", { exact: true }).selectOption({ label: "All" })
    await expect.poll(whos, shown).toHaveLength(3)
    await rows.getByRole("button", { name: "Grace Hopper" }).click()
    await expect.poll(whos, shown).toEqual(["by Grace Hopper"])
    expect(await page.getByLabel("Actor", { exact: true }).inputValue()).not.toBe("")

    await rows.first().getByRole("link", { name: "unit of work" }).click()
    await page.getByRole("heading", { name: /^Unit of work / }).waitFor(shown)
    await expect
      .poll(() => page.locator(".correlation .activity-row .who").allTextContents(), shown)
      .toEqual(["by Grace Hopper"])
    await context.close()
  })
})
