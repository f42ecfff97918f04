import { Effect, Schema, SchemaGetter, SchemaIssue, SchemaTransformation } from "effect"
import { parseJson } from "./parseJson"

const jsonText = SchemaTransformation.makeTransformation({
  decode: SchemaGetter.transformEffect<unknown, string>((text, options) =>
    Effect.try({
      try: () => parseJson(text),
      catch: () => new SchemaIssue.InvalidValue({ expected: "a valid JSON string" }, text, options)
    })
  ),
  encode: SchemaGetter.stringifyJson()
})

/** `Schema.fromJsonString`, its text read by `parseJson` (src/json/parseJson.ts says why). */
export const fromJsonText = <S extends Schema.Top>(schema: S) =>
  Schema.String.annotate({ expected: "a string that will be decoded as JSON" }).pipe(Schema.decodeTo(schema, jsonText))
