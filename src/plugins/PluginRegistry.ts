import { Context, Layer, Option } from "effect"
import { crm } from "./crm"
import { BusinessObjectDefinition } from "./Plugin"
import type { Plugin } from "./Plugin"

export interface PluginRegistryShape {
  readonly plugins: ReadonlyArray<Plugin>
  readonly businessObjects: ReadonlyArray<BusinessObjectDefinition>
  readonly find: (name: string) => Option.Option<BusinessObjectDefinition>
}

const make = (plugins: ReadonlyArray<Plugin>): PluginRegistryShape => {
  const definitions = plugins.flatMap((plugin) =>
    Object.entries(plugin.businessObjects).map(
      ([name, declaration]) => new BusinessObjectDefinition({ name: `${plugin.namespace}/${name}`, fields: declaration.fields })
    )
  )
  const byName = new Map(definitions.map((definition) => [definition.name, definition]))
  return { plugins, businessObjects: definitions, find: (name) => Option.fromNullable(byName.get(name)) }
}

/** The plugins compiled into this service; every workspace has all of them. */
export class PluginRegistry extends Context.Tag("PluginRegistry")<PluginRegistry, PluginRegistryShape>() {
  static readonly layer = (plugins: ReadonlyArray<Plugin>) => Layer.succeed(PluginRegistry, make(plugins))
  static readonly Default = PluginRegistry.layer([crm])
}
