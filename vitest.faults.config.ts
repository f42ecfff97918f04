import { defineConfig } from "vitest/config"

/**
 * The fault suite (`npm run test:faults`): each scenario starts its own
 * PostgreSQL, Redis and service process, so the files run one at a time
 * (they measure latencies and share two cores). See docs/reliability.md.
 */
export default defineConfig({
  test: {
    include: ["test/faults/**/*.test.ts"],
    fileParallelism: false,
    testTimeout: 240_000,
    hookTimeout: 120_000
  }
})
