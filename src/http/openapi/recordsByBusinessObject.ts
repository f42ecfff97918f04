import type * as OpenApi from "effect/http-api/OpenApi"
import type { JsonSchema as Json } from "effect"
import { Predicate } from "effect"
import type { RegisteredBusinessObject } from "../../plugins/PluginRegistry"
import type { ObjectSchema } from "./valuesJsonSchema"
import { valuesJsonSchema } from "./valuesJsonSchema"

type Spec = OpenApi.OpenAPISpec
type Operation = OpenApi.OpenAPISpecOperation
type Content = OpenApi.OpenApiSpecContent
type ResponseWithHeaders = OpenApi.OpenApiSpecResponse
type JsonSchema = Json.JsonSchema

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })

const etagHeader = (description: string): Record<string, OpenApi.OpenAPISpecHeader> => ({
  ETag: { description, required: false, schema: { type: "string" } }
})

const recordETag = etagHeader(
  'the record\'s version, quoted ("7"): send it back as `If-Match` to write on that version'
)

/** Paths of the records routes, `{namespace}/{name}` naming the business object: one per object replaces each. */
const recordsPrefixes = ["/api/records/{namespace}/{name}", "/api/actions/{namespace}/{name}"]
const isRecordsPath = (path: string) => recordsPrefixes.some((prefix) => path.startsWith(prefix))
const objectParams: ReadonlySet<string> = new Set(["namespace", "name", "action"])

/** The components the generic records routes used and per-object ones replace. */
const genericComponents = ["CreateRecord", "UpdateRecord", "RecordList"] as const

/** A component name for a business object (`crm/deal` -> `crm.deal`): names allow `[A-Za-z0-9._-]` only. */
const componentPrefix = (businessObject: string) => businessObject.replace(/[^A-Za-z0-9._-]/g, ".")

/** A schema's `properties`, when it has them. */
const propertiesOf = (schema: JsonSchema): Readonly<Record<string, unknown>> =>
  Predicate.isObject(schema.properties) ? schema.properties : {}

/** The per-object components: values as sent and as stored, the record, its list and the request bodies. */
const componentsFor = (
  registered: RegisteredBusinessObject,
  storedRecord: JsonSchema | undefined,
  recordAsOf: JsonSchema | undefined
) => {
  const { name, fields } = registered.definition
  const prefix = componentPrefix(name)
  const names = {
    values: `${prefix}.Values`,
    valuesInput: `${prefix}.ValuesInput`,
    record: `${prefix}.Record`,
    recordAsOf: `${prefix}.RecordAsOf`,
    list: `${prefix}.RecordList`,
    create: `${prefix}.CreateRecord`,
    update: `${prefix}.UpdateRecord`
  }
  const empty: ObjectSchema = { type: "object", required: [], properties: {}, additionalProperties: false }
  const objectOr = (schema: JsonSchema | undefined): JsonSchema =>
    schema !== undefined && schema.type === "object" ? schema : empty
  const generic = objectOr(storedRecord)
  const genericAsOf = objectOr(recordAsOf)
  const schemas: Record<string, JsonSchema> = {
    [names.values]: { ...valuesJsonSchema(fields, "stored"), description: `The values of a ${name} record` },
    [names.valuesInput]: {
      ...valuesJsonSchema(fields, "input"),
      description: `Values of a ${name} record as sent: every field optional, null clears one`
    },
    [names.record]: {
      ...generic,
      description: `A ${name} record`,
      properties: {
        ...propertiesOf(generic),
        businessObject: { type: "string", enum: [name] },
        values: ref(names.values)
      }
    },
    [names.recordAsOf]: {
      ...genericAsOf,
      description: `A ${name} record as it was just after a timeline entry (asOf)`,
      properties: {
        ...propertiesOf(genericAsOf),
        businessObject: { type: "string", enum: [name] },
        values: ref(names.values)
      }
    },
    [names.list]: {
      type: "object",
      required: ["records", "nextCursor"],
      properties: {
        records: { type: "array", items: ref(names.record) },
        nextCursor: { type: ["string", "null"], description: "send as `cursor` for the next page; null: no more" }
      },
      additionalProperties: false
    },
    [names.create]: {
      type: "object",
      required: ["values"],
      properties: {
        values: ref(names.valuesInput),
        draft: { type: "boolean", default: false, description: "create a draft: no timeline until published" }
      },
      additionalProperties: false
    },
    [names.update]: {
      type: "object",
      required: ["values"],
      properties: { values: ref(names.valuesInput) },
      additionalProperties: false
    }
  }
  const retargets = new Map([
    [ref("StoredRecord").$ref, names.record],
    [ref("RecordAsOf").$ref, names.recordAsOf],
    [ref("RecordList").$ref, names.list],
    [ref("CreateRecord").$ref, names.create],
    [ref("UpdateRecord").$ref, names.update]
  ])
  return { names, schemas, retargets }
}

/** The members of a union of schemas (a union success body); none for an enum's or `object`'s own `anyOf`. */
const unionMembers = (schema: JsonSchema): ReadonlyArray<JsonSchema> | undefined =>
  Array.isArray(schema.anyOf) && !("$comment" in schema) && !("type" in schema)
    ? schema.anyOf.filter(Predicate.isObject)
    : undefined

/** A schema pointed at the object's own component if it names a generic one; each member of an `anyOf` too. */
const retargetSchema = (schema: JsonSchema, retargets: ReadonlyMap<string, string>): JsonSchema => {
  if (typeof schema.$ref === "string") {
    const target = retargets.get(schema.$ref)
    return target === undefined ? schema : ref(target)
  }
  const members = unionMembers(schema)
  return members === undefined
    ? schema
    : { ...schema, anyOf: members.map((member) => retargetSchema(member, retargets)) }
}

/** The JSON body `content` with its schema pointed at the object's own components. */
const retarget = (content: Content | undefined, retargets: ReadonlyMap<string, string>): Content | undefined => {
  const schema = content?.["application/json"]?.schema
  return schema === undefined
    ? content
    : { ...content, "application/json": { schema: retargetSchema(schema, retargets) } }
}

/**
 * The create route: its generic body is written out inline (it has defaults,
 * `OpenApiDocument.ts`), so no `$ref` says what to point at the object's own.
 */
const isCreate = (genericPath: string, method: OpenApi.OpenAPISpecMethodName) =>
  genericPath === recordsPrefixes[0] && method === "post"

/** A generic records operation made the one of a business object (and action). */
const specialize = (
  operation: Operation,
  registered: RegisteredBusinessObject,
  components: ReturnType<typeof componentsFor>,
  action: string | undefined,
  create: boolean
): Operation => {
  const { name } = registered.definition
  const recordRef = ref(components.names.record).$ref
  const namesRecord = (schema: JsonSchema): boolean =>
    typeof schema.$ref === "string" ? schema.$ref === recordRef : (unionMembers(schema) ?? []).some(namesRecord)
  const isRecord = (content: Content | undefined) => {
    const schema = content?.["application/json"]?.schema
    return schema !== undefined && namesRecord(schema)
  }
  const responses = Object.fromEntries(
    Object.entries(operation.responses).map(([status, response]): [string, ResponseWithHeaders] => {
      const content = retarget(response.content, components.retargets)
      return [
        status,
        {
          ...response,
          ...(content === undefined ? {} : { content }),
          ...(Number(status) < 300 && isRecord(content)
            ? { description: `The ${name} record`, headers: recordETag }
            : {})
        }
      ]
    })
  )
  const description = action === undefined ? undefined : registered.actions.get(action)?.description
  const requestContent = create
    ? { "application/json": { schema: ref(components.names.create) } }
    : retarget(operation.requestBody?.content, components.retargets)
  return {
    ...operation,
    operationId: [operation.operationId, componentPrefix(name), ...(action === undefined ? [] : [action])].join("."),
    tags: [name],
    parameters: operation.parameters.filter(
      (parameter) => !(parameter.in === "path" && objectParams.has(parameter.name))
    ),
    responses,
    ...(operation.requestBody === undefined || requestContent === undefined
      ? {}
      : { requestBody: { ...operation.requestBody, content: requestContent } }),
    ...(description === undefined ? {} : { summary: `${action}: ${description}; needs update permission` })
  }
}

const methods: ReadonlyArray<OpenApi.OpenAPISpecMethodName> = [
  "get",
  "put",
  "post",
  "delete",
  "options",
  "head",
  "patch",
  "trace"
]

/** The concrete paths of one generic records path for a business object (one per action for the action route). */
const concretePaths = (path: string, registered: RegisteredBusinessObject) => {
  const objectPath = path.replace("{namespace}/{name}", registered.definition.name)
  return path.includes("{action}")
    ? registered.definition.actions.map((action) => ({ path: objectPath.replace("{action}", action), action }))
    : [{ path: objectPath, action: undefined }]
}

/** `GET /api/business-objects` says its ETag and its 304. */
const withBusinessObjectsValidators = (paths: OpenApi.OpenAPISpecPaths): OpenApi.OpenAPISpecPaths => {
  const list = paths["/api/business-objects"]?.get
  if (list === undefined) return paths
  const etag = etagHeader("a hash of the definitions the caller may read: send it back as `If-None-Match`")
  const ok: ResponseWithHeaders = { description: "BusinessObjectList", ...list.responses[200], headers: etag }
  const notModified: ResponseWithHeaders = {
    description: "Not modified: the ETag sent is still current",
    headers: etag
  }
  const responses = { ...list.responses, 200: ok, 304: notModified }
  return { ...paths, "/api/business-objects": { ...paths["/api/business-objects"], get: { ...list, responses } } }
}

/**
 * The OpenAPI document with the records routes typed per business object,
 * from the plugins loaded at start: each generic route
 * `/api/records/{namespace}/{name}...` (and the action route) becomes one
 * route per business object (and action), whose bodies name the object's
 * own components (`crm.deal.Record`, `crm.deal.ValuesInput`, ...) built
 * from its field definitions; record answers state their `ETag`.
 */
export const recordsByBusinessObject =
  (objects: ReadonlyArray<RegisteredBusinessObject>) =>
  (spec: Spec): Spec => {
    const { StoredRecord: storedRecord, RecordAsOf: recordAsOf } = spec.components.schemas
    const perObject = objects.map((registered) => ({
      registered,
      components: componentsFor(registered, storedRecord, recordAsOf)
    }))
    const generic = Object.entries(spec.paths).filter(([path]) => isRecordsPath(path))
    const paths: OpenApi.OpenAPISpecPaths = {}
    for (const [path, item] of Object.entries(spec.paths)) {
      if (!isRecordsPath(path)) {
        paths[path] = item
        continue
      }
      // Where the generic routes were: each business object's routes, object by object.
      if (path !== generic[0]?.[0]) continue
      for (const { registered, components } of perObject) {
        for (const [genericPath, genericItem] of generic) {
          for (const concrete of concretePaths(genericPath, registered)) {
            const item: OpenApi.OpenAPISpecPathItem = {}
            for (const method of methods) {
              const operation = genericItem[method]
              if (operation !== undefined) {
                const create = isCreate(genericPath, method)
                item[method] = specialize(operation, registered, components, concrete.action, create)
              }
            }
            paths[concrete.path] = item
          }
        }
      }
    }
    const schemas = { ...spec.components.schemas }
    for (const { components } of perObject) Object.assign(schemas, components.schemas)
    const document: Spec = {
      ...spec,
      paths: withBusinessObjectsValidators(paths),
      components: { ...spec.components, schemas },
      tags: spec.tags.flatMap((tag) =>
        tag.name === "records"
          ? objects.map(({ definition }) => ({ name: definition.name, description: `Records of ${definition.name}` }))
          : [tag]
      )
    }
    // The generic bodies are gone with their routes: drop their components unless something else still names them.
    const text = JSON.stringify({ ...document, components: { ...document.components, schemas: {} } })
    const unused = genericComponents.filter((name) => !text.includes(JSON.stringify(ref(name).$ref)))
    return {
      ...document,
      components: {
        ...document.components,
        schemas: Object.fromEntries(
          Object.entries(schemas).filter(([name]) => !unused.some((component) => component === name))
        )
      }
    }
  }
