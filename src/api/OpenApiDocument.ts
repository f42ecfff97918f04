import type { Context } from "effect"
import type * as OpenApi from "effect/http-api/OpenApi"

/**
 * Where the OpenAPI document HttpApi builds is not the one the service has
 * always served, these put it back (they run as `OpenApi.Transform`s).
 */

type JsonObject = { readonly [key: string]: unknown }

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const encodedSuffix = "Encoded"
const refPrefix = "#/components/schemas/"

/**
 * Request bodies the document has always shown inline, not as components:
 * those whose JSON form has defaults (`draft`, `force`).
 */
const inlineBodies: ReadonlyArray<string> = ["CreateRecord", "RevertRecord"]

/** `value` with every `$ref` to a component renamed by `names` or, for those in `inline`, replaced by it. */
const rewriteRefs = (
  value: unknown,
  names: ReadonlyMap<string, string>,
  inline: ReadonlyMap<string, unknown>
): unknown => {
  if (Array.isArray(value)) return value.map((item: unknown) => rewriteRefs(item, names, inline))
  if (!isObject(value)) return value
  const ref = value.$ref
  if (typeof ref === "string" && ref.startsWith(refPrefix)) {
    const name = names.get(ref.slice(refPrefix.length)) ?? ref.slice(refPrefix.length)
    if (inline.has(name)) return inline.get(name)
    return { ...value, $ref: `${refPrefix}${name}` }
  }
  return Object.fromEntries(Object.entries(value).map(([key, member]) => [key, rewriteRefs(member, names, inline)]))
}

/**
 * HttpApi names the JSON form of a `Schema.Class` (and of a tagged error)
 * `<identifier>Encoded`; the document names it by its identifier, as it
 * always has (`StoredRecord`, `PreconditionFailed`): the components and
 * every `$ref` to them are renamed, unless the plain name is taken. The
 * bodies of `inlineBodies` are written out where they are used.
 */
export const componentNames: Context.Service.Shape<typeof OpenApi.Transform> = (spec) => {
  const components = spec.components
  const schemas = isObject(components) ? components.schemas : undefined
  if (!isObject(components) || !isObject(schemas)) return spec
  const names = new Map(
    Object.keys(schemas).flatMap((name) => {
      const plain = name.slice(0, -encodedSuffix.length)
      return name.endsWith(encodedSuffix) && plain.length > 0 && !Object.hasOwn(schemas, plain)
        ? [[name, plain] as const]
        : []
    })
  )
  const named = Object.fromEntries(Object.entries(schemas).map(([name, schema]) => [names.get(name) ?? name, schema]))
  const inline = new Map(
    inlineBodies.flatMap((name) =>
      Object.hasOwn(named, name) ? [[name, rewriteRefs(named[name], names, new Map())]] : []
    )
  )
  const kept = Object.fromEntries(Object.entries(named).filter(([name]) => !inline.has(name)))
  const rewritten = rewriteRefs({ ...spec, components: { ...components, schemas: kept } }, names, inline)
  return isObject(rewritten) ? rewritten : spec
}

/**
 * A response's description as the document has always put it: that of the
 * first schema the status answers with (HttpApi joins them all with " | "),
 * and "Success" for a 204 (HttpApi: "<No Content>").
 */
const responseDescription = (description: string): string =>
  description === "<No Content>" ? "Success" : (description.split(" | ")[0] ?? description)

const withResponseDescriptions = (operation: unknown): unknown => {
  if (!isObject(operation) || !isObject(operation.responses)) return operation
  return {
    ...operation,
    responses: Object.fromEntries(
      Object.entries(operation.responses).map(([status, response]) => [
        status,
        isObject(response) && typeof response.description === "string"
          ? { ...response, description: responseDescription(response.description) }
          : response
      ])
    )
  }
}

/**
 * The document as the service serves it (the `OpenApi.Transform` of `Api`):
 * `componentNames`, and the responses' descriptions put back.
 */
export const servedDocument: Context.Service.Shape<typeof OpenApi.Transform> = (spec) => {
  const named = componentNames(spec)
  const paths = named.paths
  if (!isObject(paths)) return named
  return {
    ...named,
    paths: Object.fromEntries(
      Object.entries(paths).map(([path, item]) => [
        path,
        isObject(item)
          ? Object.fromEntries(
              Object.entries(item).map(([method, operation]) => [method, withResponseDescriptions(operation)])
            )
          : item
      ])
    )
  }
}

/**
 * HttpApi documents a query parameter by its text form (a numeric string);
 * the document says what a caller sends: `schemas` gives the JSON schema of
 * each such parameter by name (an integer for `limit` and `wait`), its
 * description also the parameter's.
 */
export const queryParameterSchemas =
  (schemas: { readonly [name: string]: JsonObject }) =>
  (operation: { readonly [key: string]: unknown }): { readonly [key: string]: unknown } => {
    const parameters = operation.parameters
    if (!Array.isArray(parameters)) return operation
    return {
      ...operation,
      parameters: parameters.map((parameter: unknown) => {
        if (!isObject(parameter) || parameter.in !== "query" || typeof parameter.name !== "string") return parameter
        const schema = Object.hasOwn(schemas, parameter.name) ? schemas[parameter.name] : undefined
        if (schema === undefined) return parameter
        const description = schema.description
        return { ...parameter, ...(typeof description === "string" ? { description } : {}), schema }
      })
    }
  }
