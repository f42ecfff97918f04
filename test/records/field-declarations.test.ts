import { describe, expect, it } from "@effect/vitest"
import { field } from "../../src/api/Field"
import type { Field } from "../../src/api/Field"
import type { Plugin } from "../../src/plugins/Plugin"
import { PluginRegistry } from "../../src/plugins/PluginRegistry"
import { crm } from "../../src/plugins/crm"

/** Field declarations no value could satisfy are refused when the plugins load, naming the field. */

const pluginWith = (declared: Field): Plugin => ({
  namespace: "odd",
  label: "Odd",
  businessObjects: {
    thing: { label: "Thing", title: "name", fields: { name: field.string, nested: field.collection({ it: declared }) } }
  }
})

describe("field declarations, checked when the plugins load", () => {
  it("a choice needs options, none blank, none twice", () => {
    const cases: ReadonlyArray<[Field, string]> = [
      [{ kind: "choice", options: [] }, "field odd/thing.nested.it: a choice needs at least one option"],
      [field.choice(["a", " "]), "field odd/thing.nested.it: a choice option may not be blank"],
      [field.choice(["a", "b", "a"]), "field odd/thing.nested.it: a choice lists an option twice"]
    ]
    for (const [declared, says] of cases)
      expect(() => PluginRegistry.layerWith([crm, pluginWith(declared)])).toThrow(says)
  })

  it("a link names a business object some plugin declares", () => {
    expect(() => PluginRegistry.layerWith([crm, pluginWith(field.link("crm/contact"))])).toThrow(
      "field odd/thing.nested.it: links to crm/contact, which no plugin declares"
    )
    expect(() => PluginRegistry.layerWith([crm, pluginWith(field.link("odd/thing"))])).not.toThrow()
    expect(() => PluginRegistry.layerWith([crm, pluginWith(field.required(field.link("crm/company")))])).not.toThrow()
  })

  it("field.required keeps the field as it is and marks it required", () => {
    expect(field.required(field.stringWith({ maxLength: 5 }))).toEqual({ kind: "string", maxLength: 5, required: true })
    expect(field.required(field.choice(["a"]))).toEqual({ kind: "choice", options: ["a"], required: true })
    expect(field.string).toEqual({ kind: "string" })
  })
})
