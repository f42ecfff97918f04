import { Context, Layer, Option } from "effect"
import type { Operation } from "../api/Cause"
import { crm } from "./crm"
import { BusinessObjectDefinition } from "../api/BusinessObjectDefinition"
import type { Fields } from "../api/Field"
import type { PluginLabels } from "../api/RecordTitle"
import type { ActionDeclaration, JobDeclaration, ListenerDeclaration, Plugin, WorkflowDeclaration } from "./Plugin"
import { recordTitle, titleRuleProblem } from "./recordTitle"

export interface RegisteredBusinessObject {
  readonly definition: BusinessObjectDefinition
  /** The declaration's title rule (`BusinessObjectDeclaration.title`). */
  readonly title: string
  /** By name: a Map, so an action name from a request never reaches Object.prototype. */
  readonly actions: ReadonlyMap<string, ActionDeclaration>
}

/** A workflow under its full id `<namespace>/<id>`. */
export interface RegisteredWorkflow {
  readonly id: string
  readonly declaration: WorkflowDeclaration
}

export interface PluginRegistryShape {
  readonly plugins: ReadonlyArray<Plugin>
  readonly businessObjects: ReadonlyArray<BusinessObjectDefinition>
  readonly find: (name: string) => Option.Option<RegisteredBusinessObject>
  readonly listenersFor: (businessObject: string, operation: Operation) => ReadonlyArray<ListenerDeclaration>
  /** A job by its full name `<namespace>/<name>`. */
  readonly job: (name: string) => Option.Option<JobDeclaration>
  readonly workflow: (id: string) => Option.Option<RegisteredWorkflow>
  readonly workflowsFor: (businessObject: string, operation: Operation) => ReadonlyArray<RegisteredWorkflow>
  /** What a person reads for the plugins' system actors, jobs, actions and listeners. */
  readonly labels: PluginLabels
  /** A record's title by its business object's rule; a business object no plugin declares: "Untitled record". */
  readonly titleOf: (businessObject: string, values: unknown) => string
  /** The top-level link fields that point at `businessObject`, by business object, in declaration order. */
  readonly linksTo: (businessObject: string) => ReadonlyArray<LinkingField>
}

/** A top-level link field of `businessObject` (`<namespace>/<name>`) named `field`. */
export interface LinkingField {
  readonly businessObject: string
  readonly field: string
}

/**
 * A declared name that a wire object (a JSON body, an audit row's changes)
 * could not carry: effect's Schema.Record drops an own "__proto__" key on
 * decode and encode. Refused when the plugins load, so no such field,
 * action, job or workflow ever exists.
 */
const refuseUnrepresentable = (plugin: Plugin) => {
  const check = (what: string, name: string) => {
    if (name === "__proto__") throw new Error(`plugin ${plugin.namespace}: ${what} may not be named "__proto__"`)
  }
  const checkFields = (fields: Fields, at: string) => {
    for (const [name, field] of Object.entries(fields)) {
      check(`field ${at}${name}`, name)
      if (field.kind === "struct" || field.kind === "collection") checkFields(field.fields, `${at}${name}.`)
    }
  }
  check("the namespace", plugin.namespace)
  for (const [name, declaration] of Object.entries(plugin.businessObjects)) {
    check("a business object", name)
    checkFields(declaration.fields, `${name}.`)
    for (const action of Object.keys(declaration.actions ?? {})) check(`action ${name}/${action}`, action)
  }
  for (const job of Object.keys(plugin.jobs ?? {})) check("a job", job)
  for (const workflow of plugin.workflows ?? []) check("a workflow", workflow.id)
}

/**
 * Field declarations that could never be satisfied, refused when the plugins
 * load: a choice without options, with a blank or repeated one; a link to a
 * business object no plugin declares.
 */
const refuseUnsatisfiable = (plugins: ReadonlyArray<Plugin>) => {
  const names = new Set(
    plugins.flatMap((plugin) => Object.keys(plugin.businessObjects).map((name) => `${plugin.namespace}/${name}`))
  )
  const checkFields = (fields: Fields, at: string) => {
    for (const [name, field] of Object.entries(fields)) {
      const where = `field ${at}${name}`
      if (field.kind === "struct" || field.kind === "collection") checkFields(field.fields, `${at}${name}.`)
      if (field.kind === "choice") {
        if (field.options.length === 0) throw new Error(`${where}: a choice needs at least one option`)
        if (field.options.some((option) => option.trim().length === 0))
          throw new Error(`${where}: a choice option may not be blank`)
        if (new Set(field.options).size !== field.options.length)
          throw new Error(`${where}: a choice lists an option twice`)
      }
      if (field.kind === "link" && !names.has(field.target))
        throw new Error(`${where}: links to ${field.target}, which no plugin declares`)
    }
  }
  for (const plugin of plugins) {
    for (const [name, declaration] of Object.entries(plugin.businessObjects)) {
      checkFields(declaration.fields, `${plugin.namespace}/${name}.`)
      const problem = titleRuleProblem(declaration.title, declaration.fields)
      if (problem !== undefined) throw new Error(`business object ${plugin.namespace}/${name}: ${problem}`)
    }
  }
}

/** The labels a page shows for technical names (the seeder's and workflows' actor names, jobs, actions, listeners). */
const labelsOf = (plugins: ReadonlyArray<Plugin>): PluginLabels => ({
  actors: Object.fromEntries(
    plugins.flatMap((plugin) => [
      [`seeder:${plugin.namespace}`, `Seed data (${plugin.label})`],
      ...(plugin.workflows ?? []).map((workflow) => [
        `workflow:${plugin.namespace}/${workflow.id}`,
        `Workflow: ${workflow.label}`
      ])
    ])
  ),
  jobs: Object.fromEntries(
    plugins.flatMap((plugin) =>
      Object.entries(plugin.jobs ?? {}).map(([name, job]) => [`${plugin.namespace}/${name}`, job.label])
    )
  ),
  actions: Object.fromEntries(
    plugins.flatMap((plugin) =>
      Object.entries(plugin.businessObjects).flatMap(([name, declaration]) =>
        Object.entries(declaration.actions ?? {}).map(([action, { label }]) => [
          `${plugin.namespace}/${name}/${action}`,
          label
        ])
      )
    )
  ),
  listeners: Object.fromEntries(
    plugins.flatMap((plugin) => (plugin.listeners ?? []).map((listener) => [listener.name, listener.label]))
  )
})
/**
 * List columns that could not be shown, refused when the plugins load: a
 * name no top-level field has, a struct or collection, a column named twice.
 */
const refuseUnknownColumns = (plugin: Plugin) => {
  for (const [name, declaration] of Object.entries(plugin.businessObjects)) {
    const columns = declaration.columns ?? []
    const where = `${plugin.namespace}/${name}`
    for (const column of columns) {
      const field = Object.hasOwn(declaration.fields, column) ? declaration.fields[column] : undefined
      if (field === undefined) throw new Error(`${where}: column ${column} names no field`)
      if (field.kind === "struct" || field.kind === "collection")
        throw new Error(`${where}: column ${column} is a ${field.kind}; a column shows one value`)
    }
    if (new Set(columns).size !== columns.length) throw new Error(`${where}: a column is listed twice`)
  }
}

const make = (plugins: ReadonlyArray<Plugin>): PluginRegistryShape => {
  plugins.forEach(refuseUnrepresentable)
  refuseUnsatisfiable(plugins)
  plugins.forEach(refuseUnknownColumns)
  const registered = plugins.flatMap((plugin) =>
    Object.entries(plugin.businessObjects).map(
      ([name, declaration]): RegisteredBusinessObject => ({
        definition: new BusinessObjectDefinition({
          name: `${plugin.namespace}/${name}`,
          fields: declaration.fields,
          actions: Object.keys(declaration.actions ?? {}),
          columns: declaration.columns ?? [],
          label: declaration.label,
          title: declaration.title,
          actionLabels: Object.fromEntries(
            Object.entries(declaration.actions ?? {}).map(([action, { label }]) => [action, label])
          )
        }),
        title: declaration.title,
        actions: new Map(Object.entries(declaration.actions ?? {}))
      })
    )
  )
  const byName = new Map(registered.map((entry) => [entry.definition.name, entry]))
  const listeners = plugins.flatMap((plugin) => plugin.listeners ?? [])
  const jobs = new Map<string, JobDeclaration>(
    plugins.flatMap((plugin) =>
      Object.entries(plugin.jobs ?? {}).map(([name, job]) => [`${plugin.namespace}/${name}`, job] as const)
    )
  )
  const workflows = plugins.flatMap((plugin) =>
    (plugin.workflows ?? []).map(
      (declaration): RegisteredWorkflow => ({ id: `${plugin.namespace}/${declaration.id}`, declaration })
    )
  )
  const labels = labelsOf(plugins)
  const linking = registered.flatMap(({ definition }) =>
    Object.entries(definition.fields).flatMap(([field, declared]) =>
      declared.kind === "link" ? [{ target: declared.target, businessObject: definition.name, field }] : []
    )
  )
  return {
    plugins,
    labels,
    titleOf: (businessObject, values) => {
      const definition = byName.get(businessObject)?.definition
      return definition?.title === undefined || definition.label === undefined
        ? "Untitled record"
        : recordTitle(definition.title, values, definition.label)
    },
    businessObjects: registered.map((entry) => entry.definition),
    linksTo: (businessObject) =>
      linking
        .filter((link) => link.target === businessObject)
        .map((link) => ({ businessObject: link.businessObject, field: link.field })),
    find: (name) => Option.fromNullishOr(byName.get(name)),
    listenersFor: (businessObject, operation) =>
      listeners.filter(
        (listener) => listener.businessObject === businessObject && listener.operations.includes(operation)
      ),
    job: (name) => Option.fromNullishOr(jobs.get(name)),
    workflow: (id) => Option.fromNullishOr(workflows.find((workflow) => workflow.id === id)),
    workflowsFor: (businessObject, operation) =>
      workflows.filter(
        ({ declaration: { trigger } }) =>
          trigger.businessObject === businessObject && trigger.operations.includes(operation)
      )
  }
}

/** The plugins compiled into this service; every workspace has all of them. */
export class PluginRegistry extends Context.Service<PluginRegistry, PluginRegistryShape>()("PluginRegistry") {
  static readonly layerWith = (plugins: ReadonlyArray<Plugin>) => Layer.succeed(PluginRegistry, make(plugins))
  static readonly layer = PluginRegistry.layerWith([crm])
}
