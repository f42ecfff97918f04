import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { field } from "../../src/api/Field"
import type { Plugin } from "../../src/plugins/Plugin"
import { PluginRegistry } from "../../src/plugins/PluginRegistry"
import { crm } from "../../src/plugins/crm"
import { createRecord, expectStatus, signedInMember, timelineOf } from "../support/api"
import { baseUrl, freshWorkspace, testApp } from "../support/TestApp"

/**
 * Record limits (docs/security.md, "Record limits"): a string over its
 * field's maxLength (64 Ki characters unless the field sets one) and a
 * record over MAX_RECORD_BYTES (here 8 KiB) are 422; nothing is written.
 */

const notes: Plugin = {
  namespace: "limits",
  label: "Limits",
  businessObjects: {
    note: {
      label: "Note",
      title: "code",
      fields: {
        code: field.stringWith({ maxLength: 8 }),
        text: field.string,
        parts: field.collection({ label: field.stringWith({ maxLength: 4 }) })
      }
    }
  }
}

const maxRecordBytes = 8 * 1024

layer(testApp({ maxRecordBytes }, PluginRegistry.layerWith([crm, notes])), { excludeTestServices: true })(
  "record limits",
  (it) => {
    it.effect("a string over its field's own maxLength is 422 naming the field; nothing is written", () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const { client } = yield* signedInMember(base, yield* freshWorkspace)
        const count = Effect.map(
          client.get("/api/records/limits/note"),
          (r) => (expectStatus(200)(r) as { records: Array<unknown> }).records.length
        )
        const tooLong = [
          { values: { code: "123456789" }, says: "code: 9 characters, over the field's limit of 8" },
          {
            values: {
              parts: [
                { id: "p1", label: "ok" },
                { id: "p2", label: "toolong" }
              ]
            },
            says: "parts[1].label: 7 characters, over the field's limit of 4"
          }
        ]
        for (const { values, says } of tooLong) {
          const response = yield* client.post("/api/records/limits/note", { values })
          expect(response.status).toBe(422)
          expect(response.body).toEqual({
            _tag: "UnprocessableEntity",
            message: `invalid values for limits/note: ${says}`,
            requestId: expect.any(String)
          })
        }
        expectStatus(201)(yield* client.post("/api/records/limits/note", { values: { code: "12345678" } }))
        expect(yield* count).toBe(1)

        // An update over the limit leaves the record and its timeline as they were.
        const note = yield* createRecord(client, "limits/note", { code: "a" })
        const patch = yield* client.patch(`/api/records/limits/note/${note.id}`, { values: { code: "x".repeat(9) } })
        expect(patch.status).toBe(422)
        const stored = expectStatus(200)(yield* client.get(`/api/records/limits/note/${note.id}`))
        expect(stored).toMatchObject({ values: { code: "a" } })
        expect((yield* timelineOf(client, "limits/note", note.id)).entries).toHaveLength(1)
      })
    )

    it.effect("a record whose values take more than MAX_RECORD_BYTES as JSON is 422, on create and on update", () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const { client } = yield* signedInMember(base, yield* freshWorkspace)
        const big = yield* client.post("/api/records/limits/note", { values: { text: "x".repeat(maxRecordBytes) } })
        expect(big.status).toBe(422)
        expect((big.body as { message: string }).message).toBe(
          `limits/note record too large: its values take ${maxRecordBytes + 11} bytes as JSON, over the limit of ${maxRecordBytes}`
        )
        const note = yield* createRecord(client, "limits/note", { text: "x".repeat(maxRecordBytes / 2) })
        const grown = yield* client.patch(`/api/records/limits/note/${note.id}`, {
          values: { parts: Array.from({ length: 200 }, (_, i) => ({ id: `part-${i}`, label: "abcd" })) }
        })
        expect(grown.status).toBe(422)
        expect((yield* timelineOf(client, "limits/note", note.id)).entries).toHaveLength(1)
      })
    )
  }
)

layer(testApp(), { excludeTestServices: true })("record limits by default", (it) => {
  it.effect("a string field without a maxLength takes 65536 characters, not one more", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const { client } = yield* signedInMember(base, yield* freshWorkspace)
      expectStatus(201)(yield* client.post("/api/records/crm/company", { values: { name: "x".repeat(65_536) } }))
      const response = yield* client.post("/api/records/crm/company", { values: { name: "x".repeat(65_537) } })
      expect(response.status).toBe(422)
      expect((response.body as { message: string }).message).toBe(
        "invalid values for crm/company: name: 65537 characters, over the field's limit of 65536"
      )
      // Four such strings fit in the body limit but not in the 256 KiB record limit.
      const deal = yield* client.post("/api/records/crm/deal", {
        values: {
          title: "x".repeat(65_536),
          address: { street: "x".repeat(65_536), city: "x".repeat(65_536), country: "x".repeat(65_536) }
        }
      })
      expect(deal.status).toBe(422)
      expect((deal.body as { message: string }).message).toMatch(/over the limit of 262144$/)
    })
  )
})
