import { configDefaults, defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    globalSetup: ["test/support/buildOnce.ts"],
    include: ["test/**/*.test.ts", "test/**/*.test.tsx"],
    // The fault suite starts its own servers and runs alone: `npm run test:faults`.
    exclude: [...configDefaults.exclude, "test/faults/**"],
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
