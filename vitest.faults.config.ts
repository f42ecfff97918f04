import { defineConfig } from "vitest/config"

/**
 * The fault suite (`npm run test:faults`): each scenario starts its own
 * PostgreSQL, Redis and service process, so the files run one at a time
 * (they measure latencies and share two cores). See docs/reliability.md.
 * Fault 9 runs the compiled service: the build is brought up to date first.
 */
export default defineConfig({
  test: {
    globalSetup: ["test/support/buildOnce.ts"],
    include: ["test/faults/**/*.test.ts"],
    fileParallelism: false,
    testTimeout: 240_000,
    hookTimeout: 120_000
  }
})
