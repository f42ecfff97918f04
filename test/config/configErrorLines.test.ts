import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Config, Schema, SchemaIssue } from "effect"
import { configErrorLines } from "../../src/config/configErrorLines"
import { boolean, uniqueArray } from "../support/arbitraries"

const leaf = (message: string) => new SchemaIssue.InvalidValue({ message })
const invalid = (name: string, message: string): SchemaIssue.Issue => new SchemaIssue.Pointer([name], leaf(message))
const errorOf = (issue: SchemaIssue.Issue) => new Config.ConfigError(new Schema.SchemaError(issue))

/** Any tree of `Composite`/`AnyOf` issues (what `Config.all` and unions gather) over the leaves, in their order. */
const treeOf = (leaves: ReadonlyArray<SchemaIssue.Issue>, shape: ReadonlyArray<boolean>): SchemaIssue.Issue => {
  const [first, ...rest] = leaves
  if (first === undefined) throw new Error("no leaves")
  if (rest.length === 0) return first
  const split = Math.max(1, Math.min(leaves.length - 1, shape.filter(Boolean).length))
  const left = treeOf(leaves.slice(0, split), shape.slice(1))
  const right = treeOf(leaves.slice(split), shape.slice(1))
  return shape[0] === true
    ? new SchemaIssue.AnyOf(Schema.Union([Schema.String, Schema.Number]).ast, [left, right])
    : new SchemaIssue.Composite(Schema.Unknown.ast, [left, right])
}

describe("configuration errors as lines", () => {
  it("one line per variable, naming it, in the order read; a check without a path is its message", () => {
    const error = errorOf(
      new SchemaIssue.Composite(Schema.Unknown.ast, [
        new SchemaIssue.Composite(Schema.Unknown.ast, [
          invalid("PORT", 'Expected a network port value but received "abc"'),
          new SchemaIssue.Pointer(["X"], leaf("missing"))
        ]),
        leaf("STREAM_RETRY_MIN_MS must not be above STREAM_RETRY_MAX_MS")
      ])
    )
    expect(configErrorLines(error)).toEqual([
      'PORT: Expected a network port value but received "abc"',
      "X: missing",
      "STREAM_RETRY_MIN_MS must not be above STREAM_RETRY_MAX_MS"
    ])
  })

  it.prop(
    "every failure of any combination is one line, none twice, in order",
    [
      uniqueArray(Arbitrary.schema(Schema.String.check(Schema.isPattern(/^[A-Z][A-Z_]{0,12}$/))), (name) => name, {
        minLength: 1,
        maxLength: 12
      }),
      Arbitrary.array(boolean, { maxLength: 12 })
    ],
    ([names, shape]) => {
      const leaves = names.map((name) => invalid(name, "is wrong"))
      expect(configErrorLines(errorOf(treeOf(leaves, shape)))).toEqual(names.map((name) => `${name}: is wrong`))
      // The same failure reached twice (both sides of an Or) is still one line.
      const doubled = errorOf(new SchemaIssue.Composite(Schema.Unknown.ast, [treeOf(leaves, shape), leaves[0]!]))
      expect(configErrorLines(doubled)).toHaveLength(names.length)
    }
  )
})
