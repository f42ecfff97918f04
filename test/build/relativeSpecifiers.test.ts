import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { emittedFileFor, rewriteRelativeSpecifiers } from "../../scripts/build/relativeSpecifiers"

const files = new Set(["./audit.js", "./hydration/index.js", "../api/Api.js"])
const resolve = (specifier: string) => emittedFileFor(specifier, (path) => files.has(path))

describe("relative specifiers of the emitted client package", () => {
  it("import, export, side-effect and dynamic imports name their file; packages stay", () => {
    const emitted = [
      'import { auditClient } from "./audit";',
      'export * from "./hydration";',
      'import "../api/Api";',
      'type A = typeof import("../api/Api").Api;',
      'import { Effect } from "effect";',
      'import { x } from "./audit.js";',
      'import { gone } from "./missing";'
    ].join("\n")
    expect(rewriteRelativeSpecifiers(emitted, resolve)).toBe(
      [
        'import { auditClient } from "./audit.js";',
        'export * from "./hydration/index.js";',
        'import "../api/Api.js";',
        'type A = typeof import("../api/Api.js").Api;',
        'import { Effect } from "effect";',
        'import { x } from "./audit.js";',
        'import { gone } from "./missing";'
      ].join("\n")
    )
  })

  it.prop("text without a relative specifier is left exactly as it is", { text: Schema.String }, ({ text }) => {
    const noRelative = text.replace(/["']\.\.?(\/|["'])/g, "")
    expect(rewriteRelativeSpecifiers(noRelative, () => "./replaced.js")).toBe(noRelative)
  })

  it.prop(
    "a file is found as <it>.js before <it>/index.js; a specifier with .js is kept",
    {
      specifier: Schema.String.check(Schema.isPattern(/^\.\.?\/[a-z]{1,8}$/)),
      file: Schema.Boolean,
      folder: Schema.Boolean
    },
    ({ specifier, file, folder }) => {
      const exists = (path: string) => (path.endsWith("/index.js") ? folder : file)
      const expected = file ? `${specifier}.js` : folder ? `${specifier}/index.js` : undefined
      expect(emittedFileFor(specifier, exists)).toBe(expected)
      expect(emittedFileFor(`${specifier}.js`, () => true)).toBeUndefined()
    }
  )
})
