import { SqlClient } from "effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Result } from "effect"
import { parseJsonBody } from "../../src/http/JsonBody"
import { TestServices } from "../support/TestApp"

/**
 * Where JSON text comes in, its keys come out as written, even after another
 * text left the engine a key it would read in their place (src/json/parseJson.ts):
 * a request body, and `json`/`jsonb` read from PostgreSQL.
 */

/** Keys whose JSON spelling ends in an escape, and the key that would be read instead. */
const victims = ["\n", '"', "\\n", "x\t", "é\u0001"]
const poisonFor = (victim: string): string => JSON.stringify(victim).slice(1, 1 + victim.length)

let shapes = 0
/** An object whose first member name was never seen, so its second key is the one the engine knows there. */
const shaped = (key: string, fresh: string) => ({ [fresh]: 0, [key]: 1 })

const utf8 = new TextEncoder()

describe("request bodies", () => {
  it("keep escaped keys", () => {
    for (const victim of victims) {
      const fresh = `body${shapes++}`
      parseJsonBody(utf8.encode(JSON.stringify(shaped(poisonFor(victim), fresh))))
      const read = parseJsonBody(utf8.encode(JSON.stringify(shaped(victim, fresh))))
      expect(Result.getOrThrow(read)).toStrictEqual(shaped(victim, fresh))
    }
  })
})

layer(TestServices, { excludeTestServices: true })("json and jsonb read from PostgreSQL", (it) => {
  it.effect("keep escaped keys", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      for (const victim of victims) {
        const fresh = `column${shapes++}`
        yield* sql`SELECT ${JSON.stringify(shaped(poisonFor(victim), fresh))}::json AS value`
        const rows = yield* sql<{ readonly value: unknown; readonly binary: unknown }>`
          SELECT ${JSON.stringify(shaped(victim, fresh))}::json AS value,
                 ${JSON.stringify({ [victim]: [shaped(victim, fresh)] })}::jsonb AS binary`
        expect(rows[0]?.value).toStrictEqual(shaped(victim, fresh))
        expect(rows[0]?.binary).toStrictEqual({ [victim]: [shaped(victim, fresh)] })
      }
    })
  )
})
