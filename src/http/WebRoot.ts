import { Context } from "effect"
import { fileURLToPath } from "node:url"

/**
 * The folder holding the built web page (`npm run build:web` writes
 * `dist/web`). Tests provide a folder of their own, so that two runs
 * building at once never serve each other's half-written files.
 */
export const WebRoot = Context.Reference<string>("WebRoot", {
  defaultValue: () => fileURLToPath(new URL("../../dist/web", import.meta.url))
})
