/**
 * `npm run screenshots`: a PNG of each page of the web page, into
 * docs/screenshots/ (docs/web.md shows them). It starts the service embedded
 * (the page built into a temporary folder, PostgreSQL and Redis as the tests
 * use them: TEST_DATABASE_URL, TEST_REDIS_URL), makes a workspace with two
 * people, Ada and Grace, seeds their activity through the API, and drives
 * Debian's Chromium (playwright-core) as the browser tests do.
 *
 * With `BASE` (e.g. `BASE=http://127.0.0.1:3000`) it uses that service
 * instead, signing in as the two people named by `SHOT_WORKSPACE`,
 * `SHOT_ADA` and `SHOT_GRACE` (`email:password`, both admins there).
 */
import { mkdir } from "node:fs/promises"
import { join } from "node:path"
import { Effect } from "effect"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { clientFor, createRecord, recordsOf } from "../test/support/api"
import type { Client } from "../test/support/api"
import { signIn } from "../test/support/http"
import { freshWorkspace } from "../test/support/TestApp"
import { launchChromium } from "../test/browser/support/chromium"
import { namedAdmin } from "../test/browser/support/members"
import type { Person } from "../test/browser/support/members"
import { recordPage, signInThroughForm } from "../test/browser/support/pages"
import { startPageHarness } from "../test/browser/support/pageHarness"

const out = join(import.meta.dirname, "..", "docs", "screenshots")
const shown = { timeout: 15_000 }

interface Setup {
  readonly base: string
  readonly browser: Browser
  readonly ada: Person
  readonly grace: Person
  readonly close: () => Promise<void>
}

const personFrom = (name: string, workspace: string, variable: string): Person => {
  const value = process.env[variable] ?? ""
  const at = value.indexOf(":")
  if (at <= 0) throw new Error(`${variable} must be email:password (with BASE set)`)
  return { name, workspace, email: value.slice(0, at), password: value.slice(at + 1) }
}

const setUp = async (): Promise<Setup> => {
  const base = process.env.BASE
  if (base !== undefined && base !== "") {
    const workspace = process.env.SHOT_WORKSPACE ?? ""
    if (workspace === "") throw new Error("SHOT_WORKSPACE names the workspace (with BASE set)")
    const browser = await launchChromium()
    return {
      base: base.replace(/\/$/, ""),
      browser,
      ada: personFrom("Ada", workspace, "SHOT_ADA"),
      grace: personFrom("Grace", workspace, "SHOT_GRACE"),
      close: () => browser.close()
    }
  }
  const harness = await startPageHarness()
  const workspace = await harness.run(freshWorkspace)
  const ada = await harness.run(namedAdmin(workspace, "Ada Lovelace"))
  const grace = await harness.run(namedAdmin(workspace, "Grace Hopper"))
  return { base: harness.base, browser: harness.browser, ada, grace, close: harness.close }
}

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)

/** Two people's work: companies, deals with amounts, dates, links and line items, edits, a closed deal (a cascade), a follow-up, an archived deal (a workflow). */
const seed = async (ada: Client, grace: Client) => {
  const acme = await run(
    createRecord(ada, "crm/company", { name: "Acme Corporation", website: "https://acme.example" })
  )
  const globex = await run(createRecord(grace, "crm/company", { name: "Globex", website: "https://globex.example" }))
  const adaDeals = recordsOf(ada, "crm/deal")
  const graceDeals = recordsOf(grace, "crm/deal")
  const kiosk = await run(
    createRecord(ada, "crm/deal", {
      title: "Kiosk rollout",
      stage: "open",
      amount: "12500.00",
      closeDate: "2026-12-15",
      company: acme.id,
      address: { street: "1 Harbour Road", city: "Oslo", country: "Norway" },
      lineItems: [
        { product: "Kiosk", quantity: 5, price: "2000.00" },
        { product: "Installation", quantity: 1, price: "2500.00" }
      ]
    })
  )
  await run(graceDeals.update(kiosk.id, { amount: "13750.00", stage: "negotiation" }))
  await run(adaDeals.update(kiosk.id, { closeDate: "2027-01-10" }))
  const support = await run(
    createRecord(grace, "crm/deal", { title: "Support plan", stage: "open", amount: "4800.00", company: globex.id })
  )
  await run(adaDeals.action("close", support.id))
  await run(adaDeals.action("follow-up", kiosk.id))
  const pilot = await run(createRecord(ada, "crm/deal", { title: "Pilot", amount: "900.00", company: acme.id }))
  await run(graceDeals.archive(pilot.id))
  return { kiosk, support }
}

const newPage = async (browser: Browser): Promise<{ context: BrowserContext; page: Page }> => {
  const context = await browser.newContext({
    viewport: { width: 1280, height: 860 },
    // Headless Chromium draws date inputs in its own UI language (en-US): the page's dates then read the same.
    locale: "en-US",
    timezoneId: "UTC"
  })
  return { context, page: await context.newPage() }
}

const shoot = async (page: Page, name: string) => {
  await page.evaluate(() => document.fonts.ready)
  await page.screenshot({ path: join(out, `${name}.png`) })
  console.log(`docs/screenshots/${name}.png`)
}

const main = async () => {
  const setup = await setUp()
  try {
    await mkdir(out, { recursive: true })
    const { base, browser, ada, grace } = setup
    const adaApi = clientFor(base, await run(signIn(base, ada)))
    const graceApi = clientFor(base, await run(signIn(base, grace)))
    const { kiosk, support } = await seed(adaApi, graceApi)

    const a = await newPage(browser)
    await a.page.goto(`${base}/`)
    await a.page.getByRole("button", { name: "Sign in" }).waitFor(shown)
    await a.page.getByLabel("Workspace", { exact: true }).fill(ada.workspace)
    await a.page.getByLabel("Email", { exact: true }).fill(ada.email)
    await shoot(a.page, "sign-in")
    await signInThroughForm(a.page, base, ada)

    await a.page.goto(`${base}/records/crm/deal`)
    await a.page
      .getByRole("link", { name: /Kiosk rollout/ })
      .first()
      .waitFor(shown)
    await shoot(a.page, "record-list")

    const deal = recordPage(a.page)
    await a.page.goto(`${base}/records/crm/deal/${kiosk.id}`)
    await deal.timelineRows.first().waitFor(shown)
    await shoot(a.page, "record-timeline")

    await deal.timelineRows.last().getByRole("button", { name: "View as of this entry" }).click()
    await a.page.getByRole("region", { name: "Record as it was" }).getByRole("status").waitFor(shown)
    await shoot(a.page, "as-of")
    await a.page.getByRole("button", { name: /^Back to the current/ }).click()

    // Ada edits on the version she opened; Grace saves meanwhile: Ada's save is refused.
    await deal.field("Title").fill("Kiosk rollout, phase 1")
    await run(recordsOf(graceApi, "crm/deal").update(kiosk.id, { title: "Kiosk rollout (Oslo)" }))
    await deal.save.click()
    await a.page.getByRole("alert").filter({ hasText: "Changed since you opened it" }).waitFor(shown)
    await shoot(a.page, "conflict")
    await a.page.getByRole("button", { name: "Take theirs" }).click()

    await a.page.goto(`${base}/activity`)
    await a.page
      .getByRole("link", { name: /unit of work/ })
      .first()
      .waitFor(shown)
    await shoot(a.page, "activity")

    await a.page.goto(`${base}/records/crm/deal/${support.id}`)
    await deal.timelineRows.first().waitFor(shown)
    await deal.timelineRows
      .first()
      .getByRole("link", { name: /unit of work/ })
      .click()
    await a.page.waitForURL(/\/correlations\//, shown)
    // The cascade drawn as a tree: a row nested under the row that caused it.
    await a.page.locator("section.correlation ol.cascade ol.cascade > li").first().waitFor(shown)
    await shoot(a.page, "unit-of-work")

    // Presence: Grace edits the deal Ada has open.
    const g = await newPage(browser)
    await signInThroughForm(g.page, base, grace)
    await g.page.goto(`${base}/records/crm/deal/${kiosk.id}`)
    await recordPage(g.page).field("Amount").fill("14000.00")
    await a.page.goto(`${base}/records/crm/deal/${kiosk.id}`)
    await deal.editors.filter({ hasText: `${grace.name} is editing` }).waitFor(shown)
    await shoot(a.page, "presence")

    await g.context.close()
    await a.context.close()
  } finally {
    await setup.close()
  }
}

await main()
