import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Exit, Schema } from "effect"
import { allows, GrantTarget, Permission } from "../../src/auth/Grants"
import type { Grant } from "../../src/auth/Grants"

/** Business object names as GrantTarget accepts them: `<namespace>/<name>`. */
const BusinessObject = Schema.String.check(Schema.isPattern(/^[a-z][a-z0-9-]{0,8}\/[a-z][a-zA-Z0-9-]{0,10}$/))
const businessObject = Arbitrary.schema(BusinessObject)
const permission = Arbitrary.schema(Permission)
const target = Arbitrary.schema(Schema.Union([BusinessObject, Schema.Literal("*")]))
const grant = Arbitrary.all({ businessObject: target, permission })
const grants = Arbitrary.array(grant, { maxLength: 6 })

describe("allows", () => {
  it("has no grant, allows nothing", () => {
    expect(allows([], "crm/deal", "read")).toBe(false)
    expect(allows([], "crm/deal", "update")).toBe(false)
  })

  it("update implies read; read does not imply update", () => {
    expect(allows([{ businessObject: "crm/deal", permission: "update" }], "crm/deal", "read")).toBe(true)
    expect(allows([{ businessObject: "crm/deal", permission: "update" }], "crm/deal", "update")).toBe(true)
    expect(allows([{ businessObject: "crm/deal", permission: "read" }], "crm/deal", "read")).toBe(true)
    expect(allows([{ businessObject: "crm/deal", permission: "read" }], "crm/deal", "update")).toBe(false)
    expect(allows([{ businessObject: "*", permission: "read" }], "crm/deal", "update")).toBe(false)
  })

  it("names are compared whole: no prefix, suffix or case match", () => {
    const held: ReadonlyArray<Grant> = [{ businessObject: "crm/deal", permission: "update" }]
    for (const other of ["crm/dea", "crm/deal-line", "crm/Deal", "crm", "deal", "crm/deal/", "*"]) {
      expect(allows(held, other, "read"), other).toBe(false)
    }
  })

  it.prop("the generated names are business objects GrantTarget accepts", [businessObject], ([name]) => {
    expect(Exit.isSuccess(Schema.decodeUnknownExit(GrantTarget)(name))).toBe(true)
  })

  it.prop("`*` allows every business object, at its permission and below", [businessObject], ([name]) => {
    expect(allows([{ businessObject: "*", permission: "update" }], name, "update")).toBe(true)
    expect(allows([{ businessObject: "*", permission: "update" }], name, "read")).toBe(true)
    expect(allows([{ businessObject: "*", permission: "read" }], name, "read")).toBe(true)
  })

  it.prop("update on a business object implies read on it", [grants, businessObject], ([held, name]) => {
    if (allows(held, name, "update")) expect(allows(held, name, "read")).toBe(true)
    expect(allows([...held, { businessObject: name, permission: "update" }], name, "read")).toBe(true)
  })

  it.prop(
    "read grants alone never allow update",
    [Arbitrary.array(target, { maxLength: 6 }), businessObject],
    ([names, name]) => {
      const held = names.map((businessObject): Grant => ({ businessObject, permission: "read" }))
      expect(allows(held, name, "update")).toBe(false)
    }
  )

  it.prop(
    "a grant on one business object never allows another",
    [Arbitrary.schema(Schema.Array(BusinessObject).check(Schema.isUnique(), Schema.isBetweenLength(2, 6))), permission],
    ([names, asked]) => {
      const [target, ...others] = names
      if (target === undefined) return
      const held = others.flatMap(
        (businessObject): Array<Grant> => [
          { businessObject, permission: "read" },
          { businessObject, permission: "update" }
        ]
      )
      expect(allows(held, target, asked)).toBe(false)
      expect(allows([...held, { businessObject: target, permission: "update" }], target, asked)).toBe(true)
    }
  )

  it.prop(
    "adding a grant never takes a permission away",
    [grants, grant, businessObject, permission],
    ([held, extra, name, asked]) => {
      if (allows(held, name, asked)) expect(allows([...held, extra], name, asked)).toBe(true)
    }
  )
})
