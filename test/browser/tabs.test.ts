import { Effect } from "effect"
import type { BrowserContext, Page, Request } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freshWorkspace } from "../support/TestApp"
import { clientFor, createRecord, recordsOf } from "../support/api"
import { signIn } from "../support/http"
import { chromiumInstalled, requireChromium } from "./support/chromium"
import { namedAdmin } from "./support/members"
import type { Person } from "./support/members"
import { startPageHarness } from "./support/pageHarness"
import type { PageHarness } from "./support/pageHarness"
import { recordPage, signInThroughForm } from "./support/pages"

/**
 * Ten tabs of one workspace in one browser (pages of one context: one
 * origin, one cookie jar, one set of Web Locks and BroadcastChannels), over
 * plain HTTP/1.1, where Chromium opens at most six connections to a host.
 * One tab (the leader) holds the broadcast stream and relays it to the
 * others (docs/broadcast.md, "The tab leader"). Every wait is a condition
 * with a deadline, never a sleep.
 */

const live = { timeout: 8_000, interval: 50 }
const tabCount = 10

let harness: PageHarness | undefined
let ada: Person
let dealId = ""
let api: ReturnType<typeof clientFor>

beforeAll(async () => {
  if (!chromiumInstalled()) return
  harness = await startPageHarness()
  const workspace = await harness.run(freshWorkspace)
  ada = await harness.run(namedAdmin(workspace, "Ada Lovelace"))
  api = clientFor(harness.base, await Effect.runPromise(signIn(harness.base, ada)))
  dealId = (await Effect.runPromise(createRecord(api, "crm/deal", { title: "Deal 0" }))).id
}, 240_000)

afterAll(async () => {
  await harness?.close()
}, 60_000)

/** The broadcast streams the context's tabs hold open right now, and by which tab (a closed tab's stream went with it). */
const watchStreams = (context: BrowserContext) => {
  const open = new Set<Request>()
  context.on("request", (request) => {
    if (new URL(request.url()).pathname === "/api/broadcast") open.add(request)
  })
  const done = (request: Request) => open.delete(request)
  context.on("requestfinished", done)
  context.on("requestfailed", done)
  const holders = (): ReadonlyArray<Page> =>
    [...open].flatMap((request) => request.frame().page() ?? []).filter((page) => !page.isClosed())
  return { count: () => holders().length, holders }
}

const retitle = (title: string) => Effect.runPromise(recordsOf(api, "crm/deal").update(dealId, { title }))

/** What a tab shows of the deal's title: its link in the list, or the form's field on the record page. */
const shownTitle = async (page: Page): Promise<string> => {
  if (new URL(page.url()).pathname.endsWith(dealId)) return recordPage(page).field("Title").inputValue()
  return (await page.getByRole("table").getByRole("link").first().textContent()) ?? ""
}

const listPath = "/records/crm/deal"

/** Opens the tabs: the first signs in through the form; the others share its cookie. The last shows the deal's page. */
const openTabs = async (context: BrowserContext): Promise<Array<Page>> => {
  if (harness === undefined) throw new Error("not set up")
  const first = await context.newPage()
  await signInThroughForm(first, harness.base, ada)
  await first.goto(`${harness.base}${listPath}`)
  const tabs = [first]
  for (let i = 1; i < tabCount; i++) {
    const page = await context.newPage()
    await page.goto(`${harness.base}${i === tabCount - 1 ? `${listPath}/${dealId}` : listPath}`)
    tabs.push(page)
  }
  for (const page of tabs) await page.getByText(`Signed in as ${ada.name}`).waitFor()
  return tabs
}

const tabAt = (tabs: ReadonlyArray<Page>, index: number): Page => {
  const tab = tabs[index]
  if (tab === undefined) throw new Error(`no tab ${index}`)
  return tab
}

/**
 * Arms every tab to note (its own `Date.now()`, the machine's clock) when it
 * first shows `title`, checked every 5 ms in the page; resolves to the
 * readings, undefined for a tab that has not shown it yet.
 */
const noteWhenShown = async (tabs: ReadonlyArray<Page>, title: string) => {
  await Promise.all(
    tabs.map((tab) =>
      tab.evaluate((wanted) => {
        const shows = () =>
          [...document.querySelectorAll("a, input")].some(
            (element) => (element instanceof HTMLInputElement ? element.value : element.textContent) === wanted
          )
        const timer = setInterval(() => {
          if (!shows()) return
          document.documentElement.dataset.shownAt = String(Date.now())
          clearInterval(timer)
        }, 5)
      }, title)
    )
  )
  return () =>
    Promise.all(tabs.map((tab) => tab.evaluate(() => Number(document.documentElement.dataset.shownAt ?? Number.NaN))))
}

const everyTabShows = (tabs: ReadonlyArray<Page>, title: string) =>
  expect
    .poll(async () => (await Promise.all(tabs.map(shownTitle))).filter((shown) => shown !== title).length, live)
    .toBe(0)

/** A fresh browser context with its tabs open, once they share one stream. */
const openSharingTabs = async () => {
  requireChromium()
  if (harness === undefined) throw new Error("not set up")
  const context = await harness.browser.newContext()
  const streams = watchStreams(context)
  const tabs = await openTabs(context)
  await expect.poll(() => streams.count(), live).toBe(1)
  return { context, streams, tabs }
}

describe("ten tabs of one workspace over HTTP/1.1 (Chromium, PostgreSQL, Redis)", () => {
  it("one stream for all tabs: every tab gets the hints, a save goes through, and the leader's close hands over", {
    timeout: 240_000
  }, async () => {
    const { context, streams, tabs } = await openSharingTabs()

    // A change made elsewhere: every tab shows it, by the hint its leader relayed.
    const shownAt = await noteWhenShown(tabs, "Deal 1")
    const changed = Date.now()
    await retitle("Deal 1")
    await everyTabShows(tabs, "Deal 1")
    const delays = (await shownAt()).map((at) => at - changed)
    console.log(
      `the change (its write, hint, relay and refetch) showed in all ${tabCount} tabs within ${Math.max(...delays)} ms ` +
        `(per tab: ${delays.join(", ")} ms)`
    )

    // A normal request goes through with all ten open: the deal's tab saves.
    const dealTab = recordPage(tabAt(tabs, tabCount - 1))
    await dealTab.field("Title").fill("Deal 2")
    await dealTab.save.click()
    await expect.poll(() => dealTab.saveStatus.textContent(), live).toBe("Saved")
    await everyTabShows(tabs, "Deal 2")
    expect(streams.count()).toBe(1)

    // The leader closes: another tab takes the lock and opens the stream.
    const [leader] = streams.holders()
    if (leader === undefined) throw new Error("no tab holds the stream")
    const closed = Date.now()
    await leader.close()
    const rest = tabs.filter((tab) => tab !== leader)
    await expect.poll(() => streams.holders().filter((page) => rest.includes(page)).length, live).toBe(1)
    console.log(`the stream was handed over in ${Date.now() - closed} ms`)
    await retitle("Deal 3")
    await everyTabShows(rest, "Deal 3")
    expect(streams.count()).toBe(1)
    await context.close()
  })

  it("signing out in one tab closes the stream and shows the sign-in page in every tab; signing in again in one brings them all back", {
    timeout: 240_000
  }, async () => {
    const { context, streams, tabs } = await openSharingTabs()
    const [leader] = streams.holders()
    // Not the leader: the others learn of it from the stream's 401 and from the tab that signed out.
    const signingOut = tabAt(
      tabs.filter((tab) => tab !== leader),
      0
    )

    // How the tabs learn that no one is signed in shows no 401 in their consoles: only the stream itself is refused.
    const refusedAuth: Array<string> = []
    context.on("response", (response) => {
      if (response.status() === 401 && new URL(response.url()).pathname.startsWith("/api/auth/")) {
        refusedAuth.push(response.url())
      }
    })
    await signingOut.getByRole("button", { name: "Sign out" }).click()
    const signInShown = async () =>
      (await Promise.all(tabs.map((tab) => tab.getByRole("heading", { name: "Sign in" }).isVisible()))).filter(Boolean)
        .length
    await expect.poll(signInShown, live).toBe(tabCount)
    await expect.poll(() => streams.count(), live).toBe(0)
    expect(refusedAuth).toEqual([])

    // Signing in again in another tab brings every tab back, with one stream again.
    if (harness === undefined) throw new Error("not set up")
    const again = tabAt(tabs, 2)
    await again.getByLabel("Workspace", { exact: true }).fill(ada.workspace)
    await again.getByLabel("Email", { exact: true }).fill(ada.email)
    await again.getByLabel("Password", { exact: true }).fill(ada.password)
    await again.getByRole("button", { name: "Sign in" }).click()
    const signedIn = async () =>
      (await Promise.all(tabs.map((tab) => tab.getByText(`Signed in as ${ada.name}`).isVisible()))).filter(Boolean)
        .length
    await expect.poll(signedIn, live).toBe(tabCount)
    await expect.poll(() => streams.count(), live).toBe(1)
    await retitle("Deal 4")
    await everyTabShows(tabs, "Deal 4")
    await context.close()
  })
})
