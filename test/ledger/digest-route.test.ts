import { generateKeyPairSync } from "node:crypto"
import { expect, layer } from "@effect/vitest"
import { Effect, Option, Redacted, Result, Schema } from "effect"
import { LedgerDigest } from "../../src/api/AuditApi"
import type { Workspace } from "../../src/api/Workspace"
import { Roles } from "../../src/auth/Roles"
import { createClient } from "../../src/client"
import { withActor } from "../../src/context/Frames"
import { checkDigestLine, digestLine } from "../../src/ledger/Digests"
import { readHead } from "../../src/ledger/LedgerRows"
import { Records } from "../../src/records/Records"
import { UnitOfWork } from "../../src/unitOfWork/UnitOfWork"
import { clientFor, signedInMember } from "../support/api"
import { browserFetch } from "../support/browserFetch"
import { baseUrl, freshUser, freshWorkspace, TestApp, testApp, testPassword } from "../support/TestApp"

const someone = { kind: "user", id: "u-digest-route", name: "Digest", email: "digest-route@example.com" } as const

const signer = generateKeyPairSync("ed25519")

const refusal = (tag: string) => expect.objectContaining({ _tag: tag, message: expect.any(String) })

/** A workspace with a few audit rows, an admin and a member who is not one, both signed in. */
const setUp = Effect.gen(function* () {
  const base = yield* baseUrl
  const workspace = yield* freshWorkspace
  const records = yield* Records
  const units = yield* UnitOfWork
  for (const name of ["One", "Two"])
    yield* units.run(workspace, records.create("crm/company", { name })).pipe(withActor(someone))
  yield* (yield* Roles).grant(workspace, "sales", "*", "read")
  const admin = yield* signedInMember(base, workspace)
  const seller = yield* signedInMember(base, workspace, "sales")
  return { base, workspace, admin: admin.client, seller: seller.client }
})

const headOf = (workspace: Workspace) => Effect.map(readHead(workspace), ({ hash, position }) => ({ position, hash }))

layer(testApp({ ledgerSigningKey: Option.some(Redacted.make(signer.privateKey)) }), { excludeTestServices: true })(
  "GET /api/audit/digest with a signing key",
  (it) => {
    it.effect("an admin gets the head signed; a member who is not an admin 403, no session 401", () =>
      Effect.gen(function* () {
        const { admin, base, seller, workspace } = yield* setUp
        const answer = yield* admin.call((api) => api.audit.digest())
        expect(answer.status).toBe(200)
        expect(answer.body).toMatchObject({
          format: "abs-ledger-digest/v1",
          workspace: workspace.slug,
          schema: workspace.schema,
          ...(yield* headOf(workspace))
        })
        // The wire shape is the contract's, and the signature holds against the configured key.
        expect(Schema.decodeUnknownSync(LedgerDigest)(answer.json)).toEqual(answer.body)
        const checked = checkDigestLine(digestLine(answer.body).trimEnd(), workspace, signer.publicKey)
        expect(Result.isSuccess(checked)).toBe(true)

        const refused = yield* seller.get("/api/audit/digest")
        expect(refused.status).toBe(403)
        expect(refused.body).toEqual(refusal("Forbidden"))
        const anonymous = yield* clientFor(base, "").get("/api/audit/digest")
        expect(anonymous.status).toBe(401)
      })
    )

    it.effect("the typed client: audit.digest for an admin", () =>
      Effect.gen(function* () {
        const { base, workspace } = yield* setUp
        const user = yield* freshUser({ workspace, role: "admin" })
        const client = createClient({ baseUrl: base, fetch: browserFetch() })
        yield* Effect.promise(() =>
          client.auth.login({ workspace: workspace.slug, email: user.email, password: testPassword })
        )
        const digest = yield* Effect.promise(() => client.audit.digest())
        expect(digest).toMatchObject({ workspace: workspace.slug, ...(yield* headOf(workspace)) })
        expect(Result.isSuccess(checkDigestLine(digestLine(digest).trimEnd(), workspace, signer.publicKey))).toBe(true)
      })
    )
  }
)

layer(TestApp, { excludeTestServices: true })("GET /api/audit/digest without a signing key", (it) => {
  it.effect("the same object, without publicKey and signature; still admins only", () =>
    Effect.gen(function* () {
      const { admin, seller, workspace } = yield* setUp
      const answer = yield* admin.call((api) => api.audit.digest())
      expect(answer.json).toEqual({
        format: "abs-ledger-digest/v1",
        workspace: workspace.slug,
        schema: workspace.schema,
        ...(yield* headOf(workspace)),
        at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      })
      expect((yield* seller.get("/api/audit/digest")).status).toBe(403)
    })
  )
})
