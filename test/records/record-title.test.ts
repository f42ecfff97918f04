import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Schema } from "effect"
import { field } from "../../src/api/Field"
import type { Fields } from "../../src/api/Field"
import type { Plugin } from "../../src/plugins/Plugin"
import { PluginRegistry } from "../../src/plugins/PluginRegistry"
import { crm } from "../../src/plugins/crm"
import { looksLikeId, recordTitle, titleMaxLength } from "../../src/plugins/recordTitle"
import { constantFrom, oneOf } from "../support/arbitraries"

/** A record's title by its business object's rule (docs/titles.md): never an id, never a throw. */

const fields: Fields = {
  name: field.string,
  website: field.string,
  count: field.number,
  owner: field.link("crm/company")
}

const pluginTitled = (title: string): Plugin => ({
  namespace: "odd",
  label: "Odd",
  businessObjects: { thing: { label: "Thing", title, fields } }
})

describe("title rules, checked when the plugins load", () => {
  it("a field name must name a declared top-level string field", () => {
    expect(() => PluginRegistry.layerWith([crm, pluginTitled("nickname")])).toThrow(
      'business object odd/thing: title "nickname" names no declared field'
    )
    expect(() => PluginRegistry.layerWith([crm, pluginTitled("count")])).toThrow(
      'business object odd/thing: title "count" names a number field, not a string field'
    )
    expect(() => PluginRegistry.layerWith([crm, pluginTitled("name")])).not.toThrow()
  })

  it("a template's placeholders must name top-level fields, at least one", () => {
    expect(() => PluginRegistry.layerWith([crm, pluginTitled("{name} at {site}")])).toThrow(
      'business object odd/thing: title template "{name} at {site}" names {site}, not a declared top-level field'
    )
    expect(() => PluginRegistry.layerWith([crm, pluginTitled("{}")])).toThrow("names {}")
    expect(() => PluginRegistry.layerWith([crm, pluginTitled("{name} ({count})")])).not.toThrow()
  })
})

const uuid = constantFrom(
  "0190a5c4-7f3e-7a61-9b2d-3c4e5f607182",
  "d5de1e51-0000-4000-8000-000000000000",
  "D5DE1E51-0000-4000-8000-00000000000A"
)
const someText = Arbitrary.schema(Schema.String.check(Schema.isMaxLength(300)))
const member = oneOf<unknown>(
  someText,
  uuid,
  Arbitrary.map(uuid, (id) => id.slice(0, 8)),
  Arbitrary.map(Arbitrary.all([someText, uuid, someText]), ([a, id, b]) => `${a}${id}${b}`),
  Arbitrary.schema(Schema.Finite),
  Arbitrary.Constant(null),
  Arbitrary.Constant({ erased: true }),
  Arbitrary.Constant(["a"])
)
const values = Arbitrary.all({ name: member, website: member, count: member, owner: member })
const rule = constantFrom("name", "{name}", "{owner}", "{name} ({count})", "Deal {website}{name}", "{missing}")
const anything = oneOf<unknown>(values, Arbitrary.Constant(null), Arbitrary.Constant("text"), someText)

describe("recordTitle", () => {
  it("the named field, or the template filled in", () => {
    expect(recordTitle("name", { name: "Acme Corporation" }, "Company")).toBe("Acme Corporation")
    expect(recordTitle("{name} ({count})", { name: "Kiosk", count: 3 }, "Deal")).toBe("Kiosk (3)")
    expect(recordTitle("name", { name: "  Acme \n Corp " }, "Company")).toBe("Acme Corp")
  })

  it("an empty, absent or erased field: Untitled <type>", () => {
    expect(recordTitle("title", { title: "" }, "Deal")).toBe("Untitled deal")
    expect(recordTitle("title", {}, "Deal")).toBe("Untitled deal")
    expect(recordTitle("title", { title: { erased: true } }, "Deal")).toBe("Untitled deal")
    expect(recordTitle("Deal for {title}", { title: " " }, "Deal")).toBe("Untitled deal")
  })

  it("ids are taken out: a link placeholder, a title typed as an id", () => {
    expect(recordTitle("{owner}", { owner: "0190a5c4-7f3e-7a61-9b2d-3c4e5f607182" }, "Thing")).toBe("Untitled thing")
    expect(recordTitle("name", { name: "Deal d5de1e51" }, "Deal")).toBe("Deal")
    expect(recordTitle("name", { name: "Invoice 20261215" }, "Deal")).toBe("Invoice 20261215")
  })

  it("long text is cut", () => {
    const title = recordTitle("name", { name: "x".repeat(1000) }, "Thing")
    expect(title.length).toBe(titleMaxLength)
    expect(title.endsWith("…")).toBe(true)
  })

  it.prop("never throws, never reads as an id, never empty, never longer than the cut", [rule, anything], ([r, v]) => {
    const title = recordTitle(r, v, "Thing")
    return !looksLikeId(title) && title.trim().length > 0 && title.length <= titleMaxLength
  })
})
