import { describe, expect, it } from "@effect/vitest"
import { ConfigError } from "effect"
import fc from "fast-check"
import { configErrorLines } from "../../src/config/configErrorLines"

const invalid = (name: string, message: string) => ConfigError.InvalidData([name], message)

/** Any binary tree of `And`/`Or` over the leaves, in their order. */
const treeOf = (
  leaves: ReadonlyArray<ConfigError.ConfigError>,
  shape: ReadonlyArray<boolean>
): ConfigError.ConfigError => {
  if (leaves.length === 1 && leaves[0] !== undefined) return leaves[0]
  const split = Math.max(1, Math.min(leaves.length - 1, shape.filter(Boolean).length))
  const left = treeOf(leaves.slice(0, split), shape.slice(1))
  const right = treeOf(leaves.slice(split), shape.slice(1))
  return shape[0] === true ? ConfigError.Or(left, right) : ConfigError.And(left, right)
}

describe("configuration errors as lines", () => {
  it("one line per variable, naming it, in the order read; a check without a path is its message", () => {
    const error = ConfigError.And(
      ConfigError.And(
        invalid("PORT", 'Expected a network port value but received "abc"'),
        ConfigError.MissingData(["X"], "missing")
      ),
      ConfigError.InvalidData([], "STREAM_RETRY_MIN_MS must not be above STREAM_RETRY_MAX_MS")
    )
    expect(configErrorLines(error)).toEqual([
      'PORT: Expected a network port value but received "abc"',
      "X: missing",
      "STREAM_RETRY_MIN_MS must not be above STREAM_RETRY_MAX_MS"
    ])
  })

  it("every failure of any combination is one line, none twice, in order", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.stringMatching(/^[A-Z][A-Z_]{0,12}$/), { minLength: 1, maxLength: 12 }),
        fc.array(fc.boolean(), { maxLength: 12 }),
        (names, shape) => {
          const leaves = names.map((name) => invalid(name, "is wrong"))
          expect(configErrorLines(treeOf(leaves, shape))).toEqual(names.map((name) => `${name}: is wrong`))
          // The same failure reached twice (both sides of an Or) is still one line.
          const doubled = ConfigError.And(treeOf(leaves, shape), leaves[0]!)
          expect(configErrorLines(doubled)).toHaveLength(names.length)
        }
      )
    )
  })
})
