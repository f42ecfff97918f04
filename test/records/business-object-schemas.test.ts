import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Roles } from "../../src/auth/Roles"
import { clientFor, signedInMember } from "../support/api"
import { baseUrl, freshWorkspace, TestApp } from "../support/TestApp"

/**
 * `GET /api/business-objects` is fetched once and revalidated (issue 14):
 * its ETag is a hash of the definitions the caller may read, and sent back
 * in `If-None-Match` it makes an unchanged list a 304 without a body.
 */
layer(TestApp, { excludeTestServices: true })("business object schemas: ETag and 304", (it) => {
  it.effect("the list carries an ETag; sent back, it is a 304 without a body; another tag gets the list", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const { client, cookie } = yield* signedInMember(yield* baseUrl, workspace)
      const first = yield* client.get("/api/business-objects")
      expect(first.status).toBe(200)
      const etag = first.headers.get("etag") ?? ""
      expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/)
      expect(first.headers.get("cache-control")).toBe("private, no-cache")
      expect((yield* client.get("/api/business-objects")).headers.get("etag")).toBe(etag)

      for (const known of [etag, `W/${etag}`, `"other", ${etag}`, "*"]) {
        const again = yield* clientFor(client.base, cookie, { "if-none-match": known }).get("/api/business-objects")
        expect([again.status, again.body, again.headers.get("etag")], known).toEqual([304, undefined, etag])
      }
      const changed = yield* clientFor(client.base, cookie, { "if-none-match": '"other"' }).get("/api/business-objects")
      expect([changed.status, changed.body]).toEqual([200, first.body])
    })
  )

  it.effect(
    "the tag follows what the caller may read and update: another role's list has its own, with mayUpdate",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const workspace = yield* freshWorkspace
        const roles = yield* Roles
        yield* roles.grant(workspace, "deals-only", "crm/deal", "read")
        const admin = yield* signedInMember(base, workspace)
        const reader = yield* signedInMember(base, workspace, "deals-only")
        const adminTag = (yield* admin.client.get("/api/business-objects")).headers.get("etag") ?? ""
        const readerList = yield* reader.client.get("/api/business-objects")
        const readerTag = readerList.headers.get("etag") ?? ""
        expect(readerList.body).toEqual({
          businessObjects: [expect.objectContaining({ name: "crm/deal" })],
          labels: expect.any(Object)
        })
        expect(readerTag).not.toBe(adminTag)
        // What the caller may do is in the list (and so in its tag): a page hides the controls it would be refused.
        expect(readerList.body).toEqual({
          businessObjects: [expect.objectContaining({ mayUpdate: false })],
          labels: expect.any(Object)
        })
        const adminList = yield* admin.client.get("/api/business-objects")
        expect(adminList.body).toEqual({
          businessObjects: expect.arrayContaining([expect.objectContaining({ name: "crm/deal", mayUpdate: true })]),
          labels: expect.any(Object)
        })
        yield* roles.grant(workspace, "deals-only", "crm/deal", "update")
        const updater = yield* reader.client.get("/api/business-objects")
        expect(updater.body).toEqual({
          businessObjects: [expect.objectContaining({ mayUpdate: true })],
          labels: expect.any(Object)
        })
        expect(updater.headers.get("etag")).not.toBe(readerTag)

        const withAdminTag = clientFor(base, reader.cookie, { "if-none-match": adminTag })
        expect((yield* withAdminTag.get("/api/business-objects")).status).toBe(200)
        const withOwnTag = clientFor(base, reader.cookie, { "if-none-match": updater.headers.get("etag") ?? "" })
        expect((yield* withOwnTag.get("/api/business-objects")).status).toBe(304)
      })
  )
})
