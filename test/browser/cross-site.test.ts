import { Effect, Schema, type Scope } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { StoredRecord } from "../../src/api/StoredRecord"
import type { Workspace } from "../../src/api/Workspace"
import { freshWorkspace } from "../support/TestApp"
import { clientFor, createRecord } from "../support/api"
import { signIn } from "../support/http"
import { changedTables, schemaChecksum } from "../security/support/checksum"
import { chromiumInstalled, requireChromium } from "./support/chromium"
import { namedAdmin } from "./support/members"
import type { Person } from "./support/members"
import { recordPage, signInThroughForm } from "./support/pages"
import { pageContext, startPageHarness } from "./support/pageHarness"
import type { AppServices, PageHarness } from "./support/pageHarness"

/**
 * Cross-site request forgery in a real browser (Debian's Chromium). The
 * attacker's pages are served from the same host on another port: another
 * origin but the SAME site, so the SameSite=Lax session cookie goes along
 * with every request they make, and only the service's Origin check can
 * tell them apart. (`localhost` against `127.0.0.1` would be another site,
 * where Lax alone already keeps the cookie home.) The victim signs in on the
 * real page first; every attack must be refused and change nothing: the
 * victim is still the victim, no record appears, the workspace checksum
 * stays. And the service's own page runs under its Content-Security-Policy
 * without a single violation while signing in, opening a record, saving and
 * showing the timeline.
 */

const live = { timeout: 8_000, interval: 100 }

let harness: PageHarness | undefined
let browser: Browser | undefined
let attacker: http.Server | undefined
let attackerOrigin = ""
let base = ""
let workspace: Workspace | undefined
let victim: Person
let mallory: Person
let dealId = ""

const run = <A, E>(effect: Effect.Effect<A, E, AppServices | Scope.Scope>) => {
  if (harness === undefined) throw new Error("not set up")
  return harness.run(effect)
}

const html = (body: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>Win a prize</title></head><body>${body}</body></html>`

/** The attacker's pages: each one fires its request as soon as it loads. */
const attackPages = (): Record<string, string> => ({
  // (a) Login CSRF: sign the victim's browser into the attacker's account.
  "/login": html(`<form id="f" method="POST" action="${base}/api/auth/login">
      <input name="workspace" value="${mallory.workspace}"><input name="email" value="${mallory.email}">
      <input name="password" value="${mallory.password}"></form><script>document.getElementById("f").submit()</script>`),
  // (b) An action on the victim's session, form-posted.
  "/action": html(`<form id="f" method="POST" action="${base}/api/actions/crm/deal/close">
      <input name="id" value="${dealId}"></form><script>document.getElementById("f").submit()</script>`),
  // (b) A record create whose text/plain form body is JSON: {"values":{"name":"Pwned","website":"="}}.
  "/create": html(`<form id="f" method="POST" enctype="text/plain" action="${base}/api/records/crm/company">
      <input name='{"values":{"name":"Pwned by form","website":"' value='"}}'></form><script>document.getElementById("f").submit()</script>`),
  // (c) fetch with the cookie and a JSON body: a CORS preflight the service does not grant.
  "/fetch-json": html(`<script>
      fetch("${base}/api/records/crm/company", { method: "POST", credentials: "include", headers: { "content-type": "application/json" },
        body: JSON.stringify({ values: { name: "Pwned by fetch json" } }) })
        .then(() => "sent", () => "failed").then((outcome) => { document.title = "done " + outcome })
    </script>`),
  // (c) fetch with text/plain and no-cors form bodies: simple requests, sent without a preflight.
  "/fetch-text": html(`<script>
      fetch("${base}/api/records/crm/company", { method: "POST", credentials: "include", headers: { "content-type": "text/plain" },
        body: JSON.stringify({ values: { name: "Pwned by fetch text" } }) })
        .then(() => "sent", () => "failed").then((outcome) => { document.title = "done " + outcome })
    </script>`),
  "/fetch-form": html(`<script>
      fetch("${base}/api/actions/crm/deal/close", { method: "POST", mode: "no-cors", credentials: "include",
        headers: { "content-type": "application/x-www-form-urlencoded" }, body: "id=${dealId}" })
        .then(() => "sent", () => "failed").then((outcome) => { document.title = "done " + outcome })
    </script>`)
})

const startAttacker = () =>
  new Promise<void>((resolve) => {
    const server = http.createServer((request, response) => {
      const page = attackPages()[request.url ?? ""]
      response.writeHead(page === undefined ? 404 : 200, { "content-type": "text/html; charset=utf-8" })
      response.end(page ?? "")
    })
    attacker = server
    server.listen(0, "127.0.0.1", () => {
      attackerOrigin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      resolve()
    })
  })

beforeAll(async () => {
  if (!chromiumInstalled()) return
  harness = await startPageHarness()
  browser = harness.browser
  base = harness.base
  const ws = await run(freshWorkspace)
  workspace = ws
  const person = (name: string) => run(namedAdmin(ws, name))
  victim = await person("Victor Victim")
  mallory = await person("Mallory Attacker")
  const api = clientFor(base, await Effect.runPromise(signIn(base, victim)), { origin: base })
  dealId = (
    await Effect.runPromise(
      createRecord(api, "crm/deal", { title: "Harbour kiosks", stage: "negotiation", amount: "900.00" })
    )
  ).id
  await startAttacker()
}, 240_000)

afterAll(async () => {
  await new Promise<void>((resolve) => (attacker === undefined ? resolve() : attacker.close(() => resolve())))
  await harness?.close()
}, 60_000)

/** Records every CSP violation the page reports, as events and as console lines. */
const watchPolicy = async (context: BrowserContext, seen: Array<string>) => {
  await context.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (event) => {
      console.error(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`)
    })
  })
  context.on("console", (message) => {
    const text = message.text()
    if (/^CSP violation|Refused to|Content Security Policy/i.test(text)) seen.push(text)
  })
}

const checksum = () => {
  if (workspace === undefined) throw new Error("not set up")
  return run(schemaChecksum(workspace.schema))
}

/** Who the victim's browser is signed in as, asked from the service's own page. */
const signedInAs = (page: Page) =>
  page.evaluate(async () => {
    const response = await fetch("/api/auth/me")
    const me: unknown = await response.json()
    return typeof me === "object" && me !== null && "name" in me ? String(me.name) : `status ${response.status}`
  })

/** The deal as the victim's own page reads it (a fetch in the page, with its cookie). */
const dealOf = async (page: Page): Promise<StoredRecord> =>
  Schema.decodeUnknownSync(StoredRecord)(
    JSON.parse(await page.evaluate(async (id) => (await fetch(`/api/records/crm/deal/${id}`)).text(), dealId))
  )

describe("cross-site requests against a signed-in victim (Chromium, PostgreSQL, Redis)", () => {
  it("the page runs under its CSP without a violation; every forged request is refused and changes nothing", {
    timeout: 180_000
  }, async () => {
    requireChromium()
    const context = await pageContext(browser)
    const violations: Array<string> = []
    await watchPolicy(context, violations)

    // The victim on the real page: sign in, open the deal, save a change, see it on the timeline.
    const page = await context.newPage()
    const served = await page.goto(`${base}/`)
    // Soft: the forgery checks below still run and report when this one fails.
    expect
      .soft(served?.headers()["content-security-policy"] ?? "", "the page's Content-Security-Policy header")
      .not.toBe("")
    await signInThroughForm(page, base, victim)
    await page.getByRole("navigation", { name: "Business objects" }).getByRole("link", { name: "Deals" }).click()
    await page.getByRole("link", { name: "Harbour kiosks" }).click()
    const record = recordPage(page)
    await record.timelineRows.first().waitFor()
    const rowsBefore = await record.timelineRows.count()
    await record.field("Amount").fill("950.00")
    await record.save.click()
    await expect.poll(() => record.saveStatus.textContent(), live).toBe("Saved")
    await expect.poll(() => record.timelineRows.count(), live).toBe(rowsBefore + 1)
    expect(violations, "CSP violations on the service's own page").toEqual([])

    const before = await checksum()
    const dealBefore = await dealOf(page)
    expect(dealBefore.values.stage).toBe("negotiation")

    // The attacker's pages, opened in the victim's browser (same cookies).
    const attacks: Array<string> = []
    for (const path of ["/login", "/action", "/create"]) {
      const attack = await context.newPage()
      const answer = attack.waitForResponse(
        (response) => response.url().startsWith(base) && response.request().method() === "POST"
      )
      await attack.goto(`${attackerOrigin}${path}`)
      const response = await answer
      attacks.push(`${path}: ${response.status()}`)
      expect
        .soft([403, 415], `the form post of ${attackerOrigin}${path} answered ${response.status()}`)
        .toContain(response.status())
      await attack.close()
    }
    for (const path of ["/fetch-json", "/fetch-text", "/fetch-form"]) {
      const attack = await context.newPage()
      const sent: Array<string> = []
      const answers: Array<number> = []
      attack.on("request", (request) => {
        if (request.url().startsWith(base) && request.method() !== "GET") sent.push(request.method())
      })
      attack.on("response", (response) => {
        if (response.url().startsWith(base) && response.request().method() === "POST") answers.push(response.status())
      })
      await attack.goto(`${attackerOrigin}${path}`)
      await expect.poll(() => attack.title(), live).toMatch(/^done /)
      // A request that got through to the service must have been refused there (one the browser hid behind CORS shows no status).
      for (const status of answers)
        expect.soft([403, 415], `${attackerOrigin}${path} reached the service and got ${status}`).toContain(status)
      attacks.push(
        `${path}: ${sent.length === 0 ? "not requested" : `requested ${sent.join(",")}, answered ${answers.join(",") || "(hidden by CORS)"}`}`
      )
      await attack.close()
    }

    // Nothing changed: still the victim, the deal as it was, no new record, every table as before.
    expect.soft(await signedInAs(page), `who the victim is after ${attacks.join("; ")}`).toBe("Victor Victim")
    expect.soft((await dealOf(page)).values, "the deal after the forged close").toEqual(dealBefore.values)
    const companies = JSON.stringify(await page.evaluate(async () => (await fetch("/api/records/crm/company")).json()))
    expect.soft(companies, "companies after the forged creates").not.toContain("Pwned")
    expect(changedTables(before, await checksum()), `tables changed by ${attacks.join("; ")}`).toEqual([])
    expect(violations, "CSP violations on the service's own page").toEqual([])
    await context.close()
  })
})
