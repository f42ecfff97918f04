import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { field } from "../../src/api/Field"
import type { Plugin } from "../../src/plugins/Plugin"
import { PluginRegistry } from "../../src/plugins/PluginRegistry"
import { crm } from "../../src/plugins/crm"

/** List columns (docs/fields.md, "Columns"): checked when the plugins load, served with the definition. */

const withColumns = (columns: ReadonlyArray<string>): Plugin => ({
  namespace: "odd",
  label: "Odd",
  businessObjects: {
    thing: {
      label: "Thing",
      title: "name",
      fields: { name: field.string, size: field.number, parts: field.collection({ it: field.string }) },
      columns
    }
  }
})

describe("list columns", () => {
  it("a column names a top-level field holding one value, once", () => {
    expect(() => PluginRegistry.layerWith([crm, withColumns(["name", "colour"])])).toThrow(
      "odd/thing: column colour names no field"
    )
    expect(() => PluginRegistry.layerWith([crm, withColumns(["parts"])])).toThrow(
      "odd/thing: column parts is a collection; a column shows one value"
    )
    expect(() => PluginRegistry.layerWith([crm, withColumns(["toString"])])).toThrow("column toString names no field")
    expect(() => PluginRegistry.layerWith([crm, withColumns(["name", "name"])])).toThrow("a column is listed twice")
    expect(() => PluginRegistry.layerWith([crm, withColumns(["size", "name"])])).not.toThrow()
  })

  it.effect("the CRM's columns are on its definitions, and its link fields are found from their target", () =>
    Effect.gen(function* () {
      const registry = yield* PluginRegistry
      const columnsOf = (name: string) => Option.map(registry.find(name), (found) => found.definition.columns)
      expect(columnsOf("crm/deal")).toEqual(Option.some(["title", "stage", "amount", "company", "closeDate"]))
      expect(columnsOf("crm/company")).toEqual(Option.some(["name", "website", "wonDeals"]))
      expect(columnsOf("crm/activity")).toEqual(Option.some(["subject", "company"]))
      expect(registry.linksTo("crm/company")).toEqual([
        { businessObject: "crm/deal", field: "company" },
        { businessObject: "crm/activity", field: "company" }
      ])
      expect(registry.linksTo("crm/deal")).toEqual([{ businessObject: "crm/activity", field: "deal" }])
    }).pipe(Effect.provide(PluginRegistry.layer))
  )
})
