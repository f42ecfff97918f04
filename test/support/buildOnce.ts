import { spawnSync } from "node:child_process"

/**
 * Vitest global setup: brings the compiled build up to date once, before any
 * test file runs. Tests that start `npm start` (which builds a stale build
 * first) then measure the service, not a build racing them; a build left to
 * the first of them would run inside that test's process group and timing.
 */
export default function setup(): void {
  const result = spawnSync(process.execPath, ["scripts/build-if-stale.mjs"], { stdio: "inherit" })
  if (result.status !== 0) throw new Error(`the build failed (exit ${String(result.status)}): see its output above`)
}
