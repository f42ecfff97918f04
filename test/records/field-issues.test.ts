import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Schema } from "effect"
import { field } from "../../src/api/Field"
import type { Field, Fields } from "../../src/api/Field"
import { fieldIssues, fieldPathText, isBlank, linksIn } from "../../src/api/FieldIssues"
import type { Completeness, FieldIssue, FieldPath } from "../../src/api/FieldIssues"
import { fieldsArb, valuesArb } from "../client/hydration/arbitraries"
import { constantFrom } from "../support/arbitraries"

/**
 * The pure field rules (src/api/FieldIssues.ts), which the service runs on
 * every write and a page may run on a form: `required`, a choice's options,
 * a string's maxLength; and the link values a write must have checked.
 */

const item: Fields = {
  name: field.required(field.string),
  code: field.stringWith({ maxLength: 4 }),
  stage: field.choice(["lead", "won", "lost"]),
  owner: field.link("kinds/target"),
  active: field.required(field.boolean),
  place: field.struct({ site: field.link("kinds/target"), code: field.required(field.string) }),
  parts: field.collection({ supplier: field.link("kinds/target"), grade: field.required(field.choice(["a", "b"])) })
}

const valid = { name: "Kiosk", active: false }

const tags = (issues: ReadonlyArray<FieldIssue>) => issues.map((issue) => `${issue._tag} ${fieldPathText(issue.path)}`)

describe("fieldIssues, by example", () => {
  it("a whole record: every required field has a value; blank strings and null are no value", () => {
    expect(fieldIssues(item, valid, "whole")).toEqual([])
    expect(tags(fieldIssues(item, {}, "whole"))).toEqual(["Missing name", "Missing active"])
    expect(tags(fieldIssues(item, { name: " \t", active: null }, "whole"))).toEqual(["Missing name", "Missing active"])
    // false and 0 are values.
    expect(fieldIssues({ n: field.required(field.number) }, { n: 0 }, "whole")).toEqual([])
  })

  it("a patch: a required field given may not be cleared; one left out keeps its value", () => {
    expect(fieldIssues(item, {}, "patch")).toEqual([])
    expect(fieldIssues(item, { stage: "won" }, "patch")).toEqual([])
    expect(tags(fieldIssues(item, { name: null }, "patch"))).toEqual(["Missing name"])
    expect(tags(fieldIssues(item, { name: "" }, "patch"))).toEqual(["Missing name"])
  })

  it("a struct or a collection entry that is given is whole, even in a patch; an absent one requires nothing", () => {
    expect(fieldIssues(item, { ...valid, place: null, parts: [] }, "whole")).toEqual([])
    expect(tags(fieldIssues(item, { place: { site: null } }, "patch"))).toEqual(["Missing place.code"])
    expect(tags(fieldIssues(item, { parts: [{ grade: "a" }, { supplier: "x" }] }, "patch"))).toEqual([
      "Missing parts[1].grade"
    ])
  })

  it("a draft requires nothing, but its choices and lengths are still checked", () => {
    expect(fieldIssues(item, { name: "", place: {}, parts: [{}] }, "draft")).toEqual([])
    expect(fieldIssues(item, { stage: "maybe", code: "12345" }, "draft")).toEqual([
      { _tag: "TooLong", path: ["code"], length: 5, maxLength: 4 },
      { _tag: "NotAnOption", path: ["stage"], value: "maybe", options: ["lead", "won", "lost"] }
    ])
  })

  it("a choice takes its options only, exactly (case and spaces count); a nested one too", () => {
    for (const value of ["Won", " won", "", "draft"]) {
      expect(fieldIssues(item, { ...valid, stage: value }, "whole"), value).toEqual([
        { _tag: "NotAnOption", path: ["stage"], value, options: ["lead", "won", "lost"] }
      ])
    }
    expect(tags(fieldIssues(item, { ...valid, parts: [{ grade: "a" }, { grade: "c" }] }, "whole"))).toEqual([
      "NotAnOption parts[1].grade"
    ])
  })

  it("values of the wrong shape are left to the schema (no issue, no throw)", () => {
    expect(fieldIssues(item, { ...valid, stage: 3, place: "x", parts: { a: 1 } }, "whole")).toEqual([])
    for (const odd of [null, 1, "x", [], [valid]]) expect(fieldIssues(item, odd, "patch")).toEqual([])
  })

  it("linksIn finds every link value, in structs and collection entries, with its path and target", () => {
    const values = {
      owner: "o-1",
      place: { site: "s-1", code: "c" },
      parts: [{ supplier: "p-1" }, { supplier: null }, { grade: "a" }, { supplier: "" }]
    }
    expect(linksIn(item, values)).toEqual([
      { path: ["owner"], target: "kinds/target", id: "o-1" },
      { path: ["place", "site"], target: "kinds/target", id: "s-1" },
      { path: ["parts", 0, "supplier"], target: "kinds/target", id: "p-1" },
      { path: ["parts", 3, "supplier"], target: "kinds/target", id: "" }
    ])
  })

  it("fieldPathText writes paths as messages show them", () => {
    expect(fieldPathText(["lineItems", 1, "price"])).toBe("lineItems[1].price")
    expect(fieldPathText(["address", "city"])).toBe("address.city")
  })
})

// Properties over random field lists (every kind, required or not, nested) and values written against them.

const schemaAndValues = Arbitrary.flatMap(fieldsArb(), (fields) =>
  Arbitrary.map(valuesArb(fields), (values) => ({ fields, values }))
)
const modes = ["draft", "patch", "whole"] as const satisfies ReadonlyArray<Completeness>
const mode = constantFrom(...modes)
const anything = Arbitrary.schema(Schema.Unknown)
const runs = { arbitrary: { runs: 400 } }

/** The value at `path`, and the field declared there. */
const at = (fields: Fields, values: unknown, path: FieldPath): { field?: Field; value: unknown } => {
  let field: Field | undefined
  let current: Fields | undefined = fields
  let value: unknown = values
  for (const step of path) {
    value = typeof value === "object" && value !== null ? (value as Record<string | number, unknown>)[step] : undefined
    if (typeof step === "number") continue
    field = current === undefined ? undefined : current[step]
    current = field?.kind === "struct" || field?.kind === "collection" ? field.fields : undefined
  }
  return { ...(field === undefined ? {} : { field }), value }
}

/** The same fields, none required. */
const optional = (fields: Fields): Fields =>
  Object.fromEntries(
    Object.entries(fields).map(([name, f]): [string, Field] =>
      f.kind === "struct" || f.kind === "collection"
        ? [name, { kind: f.kind, fields: optional(f.fields) }]
        : [name, { ...f, required: false }]
    )
  )

describe("fieldIssues, properties", () => {
  it.prop(
    "every issue points at a field of its kind and a value that breaks that rule",
    [schemaAndValues, mode],
    ([{ fields, values }, mode]) => {
      for (const issue of fieldIssues(fields, values, mode)) {
        const { field: declared, value } = at(fields, values, issue.path)
        switch (issue._tag) {
          case "Missing":
            expect(declared?.kind !== "struct" && declared?.kind !== "collection" && declared?.required).toBe(true)
            expect(isBlank(value)).toBe(true)
            break
          case "NotAnOption":
            expect(declared?.kind).toBe("choice")
            expect(declared?.kind === "choice" && declared.options.includes(issue.value)).toBe(false)
            expect(value).toBe(issue.value)
            break
          case "TooLong":
            expect(declared?.kind).toBe("string")
            expect(typeof value === "string" && value.length).toBe(issue.length)
            break
          case "BrokenLink":
            throw new Error("only the service reports broken links")
        }
      }
    },
    runs
  )

  it.prop(
    "a draft is never missing anything; a value a draft refuses, a patch and a whole record refuse too",
    [schemaAndValues],
    ([{ fields, values }]) => {
      const paths = (mode: Completeness) => fieldIssues(fields, values, mode).map((issue) => fieldPathText(issue.path))
      expect(fieldIssues(fields, values, "draft").filter((issue) => issue._tag === "Missing")).toEqual([])
      expect(paths("patch")).toEqual(expect.arrayContaining(paths("draft")))
      expect(paths("whole")).toEqual(expect.arrayContaining(paths("patch")))
    },
    runs
  )

  it.prop(
    "without `required`, every mode finds the same issues, and none is Missing",
    [schemaAndValues],
    ([{ fields, values }]) => {
      const relaxed = optional(fields)
      const draft = fieldIssues(fields, values, "draft")
      for (const mode of modes) expect(fieldIssues(relaxed, values, mode)).toEqual(draft)
    },
    runs
  )

  it.prop(
    "an empty patch passes any field list; any input is answered without throwing",
    [fieldsArb(), anything, mode],
    ([fields, input, mode]) => {
      expect(fieldIssues(fields, {}, "patch")).toEqual([])
      expect(Array.isArray(fieldIssues(fields, input, mode))).toBe(true)
      expect(Array.isArray(linksIn(fields, input))).toBe(true)
    },
    runs
  )

  it.prop(
    "linksIn returns each link value at its path, under its field's target",
    [schemaAndValues],
    ([{ fields, values }]) => {
      for (const link of linksIn(fields, values)) {
        const { field: declared, value } = at(fields, values, link.path)
        expect(declared?.kind === "link" && declared.target).toBe(link.target)
        expect(value).toBe(link.id)
      }
    },
    runs
  )
})
