import { Effect, Exit, Layer, ManagedRuntime, Scope } from "effect"
import type { Browser, BrowserContext } from "playwright-core"
import { WebRoot } from "../../../src/http/WebRoot"
import { baseUrl, testApp } from "../../support/TestApp"
import { launchChromium } from "./chromium"
import { buildWebPage } from "./webBuild"

export type AppServices = Layer.Success<ReturnType<typeof testApp>>

/** Chromium, the web page built into a temporary folder, and the service serving it over PostgreSQL and Redis. */
export interface PageHarness {
  readonly browser: Browser
  /** `http://127.0.0.1:<port>` of the service. */
  readonly base: string
  /** Runs `effect` with the service's layers, in a scope that lasts until `close`. */
  readonly run: <A, E>(effect: Effect.Effect<A, E, AppServices | Scope.Scope>) => Promise<A>
  readonly close: () => Promise<void>
}

export const startPageHarness = async (): Promise<PageHarness> => {
  // Both take a few seconds; in parallel.
  const [browser, build] = await Promise.all([launchChromium(), buildWebPage()])
  const runtime = ManagedRuntime.make(testApp().pipe(Layer.provide(Layer.succeed(WebRoot, build.root))))
  const scope = await Effect.runPromise(Scope.make())
  const run = <A, E>(effect: Effect.Effect<A, E, AppServices | Scope.Scope>) =>
    runtime.runPromise(Scope.provide(effect, scope))
  return {
    browser,
    base: await run(baseUrl),
    run,
    close: async () => {
      await browser.close()
      await Effect.runPromise(Scope.close(scope, Exit.void))
      await runtime.dispose()
      await build.remove()
    }
  }
}

/**
 * A browser context of its own (its own cookies: another person), in one
 * viewport, locale and time zone, so that what the page shows (dates
 * included) is the same on every machine.
 */
export const pageContext = (
  browser: Browser | undefined,
  viewport = { width: 1280, height: 900 }
): Promise<BrowserContext> => {
  if (browser === undefined) throw new Error("no browser")
  return browser.newContext({ viewport, locale: "en-GB", timezoneId: "UTC" })
}
