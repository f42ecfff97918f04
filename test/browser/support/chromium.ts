import { existsSync } from "node:fs"
import type { Browser } from "playwright-core"
import { chromium } from "playwright-core"

/** Debian's Chromium (package `chromium`): CI installs it; playwright-core downloads no browser of its own. */
export const chromiumPath = "/usr/bin/chromium"

export const chromiumInstalled = (): boolean => existsSync(chromiumPath)

/** Throws, naming the package to install, when Chromium is not there. */
export const requireChromium = (): void => {
  if (!chromiumInstalled()) {
    throw new Error(
      `Chromium is not installed at ${chromiumPath}: the browser tests need Debian's chromium package ` +
        "(apt-get install chromium; .ci/run installs it)"
    )
  }
}

/**
 * Headless Chromium as this machine runs it: as root (no sandbox), no GPU,
 * and none of the background connections a closed network refuses. A
 * missing browser fails the test with what to install; it is never skipped.
 */
export const launchChromium = async (): Promise<Browser> => {
  requireChromium()
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ]
  })
}
