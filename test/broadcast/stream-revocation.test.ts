import { describe, expect, it, layer } from "@effect/vitest"
import { Context, Effect, Exit, Layer } from "effect"
import { Roles } from "../../src/auth/Roles"
import { BroadcastBus } from "../../src/broadcast/BroadcastBus"
import { runCli } from "../support/cli"
import { baseUrl, freshWorkspace, testApp, testPassword } from "../support/TestApp"
import { clientFor, createRecord, expectStatus, signedInMember } from "../support/api"
import { signIn } from "../support/http"
import { openSse } from "../support/sse"
import type { SseStream } from "../support/sse"
import { awaitHint, changed, ended, eventually, opened, probe } from "./streamHelpers"

const deal = "crm/deal"
const company = "crm/company"

/** Waits for the server to end the stream; its events then, which must end with `end` and `reason`. */
const endedWith = (stream: SseStream, reason: string) =>
  Effect.gen(function* () {
    yield* stream.ended
    const events = yield* stream.events
    expect(events.at(-1)).toEqual(ended(reason))
    return events
  })

describe("revocation across instances", () => {
  it.live(
    "a membership removal made on instance A ends that user's stream on instance B (end: membership-changed); the reconnect gets 401",
    () =>
      Effect.gen(function* () {
        const a = yield* Layer.build(Layer.fresh(testApp()))
        const b = yield* Layer.build(Layer.fresh(testApp()))
        expect(Context.get(a, BroadcastBus)).not.toBe(Context.get(b, BroadcastBus))
        const baseA = yield* Effect.provide(baseUrl, a)
        const baseB = yield* Effect.provide(baseUrl, b)
        const workspace = yield* Effect.provide(freshWorkspace, a)
        const { client: admin } = yield* Effect.provide(signedInMember(baseA, workspace), a)
        const { user, cookie } = yield* Effect.provide(signedInMember(baseB, workspace, "admin"), b)
        // A second member who stays: their stream on B is not touched.
        const { cookie: staysCookie, client: stays } = yield* Effect.provide(signedInMember(baseB, workspace), b)

        const onB = yield* openSse(`${baseB}/api/broadcast`, { cookie })
        const stayingOnB = yield* openSse(`${baseB}/api/broadcast`, { cookie: staysCookie })
        yield* onB.waitFor((events) => events.length >= 1)
        expect(yield* Context.get(b, BroadcastBus).subscriberCount).toBe(2)

        expectStatus(204)(yield* admin.del(`/api/members/${user.id}`))
        const answered = performance.now()
        expect(yield* endedWith(onB, "membership-changed")).toEqual([opened, ended("membership-changed")])
        console.log(`the stream on B ended ${Math.round(performance.now() - answered)} ms after A answered the removal`)
        yield* eventually(
          "B released the stream",
          Effect.map(Context.get(b, BroadcastBus).subscriberCount, (n) => n === 1)
        )
        // The reconnect: the session went with the membership.
        const again = yield* probe(`${baseB}/api/broadcast`, { cookie })
        expect(again.status).toBe(401)

        const record = yield* createRecord(stays, deal, { title: "Still heard" })
        expect(yield* awaitHint(stayingOnB, record.id)).toEqual([opened, changed(deal, record.id)])
      }),
    { timeout: 60_000 }
  )
})

layer(testApp(), { excludeTestServices: true })("revocation on one instance", (it) => {
  it.effect(
    "sign-out ends the streams of that session only (end: signed-out); signing out everywhere ends the user's other sessions' streams",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const workspace = yield* freshWorkspace
        const { user, cookie, client } = yield* signedInMember(base, workspace)
        const secondCookie = yield* signIn(base, {
          workspace: workspace.slug,
          email: user.email,
          password: testPassword
        })
        const url = `${base}/api/broadcast`
        const first = yield* Effect.forEach([1, 2], () => openSse(url, { cookie }))
        const second = yield* openSse(url, { cookie: secondCookie })
        for (const stream of [...first, second]) yield* stream.waitFor((events) => events.length >= 1)

        expectStatus(204)(yield* client.post("/api/auth/logout"))
        for (const stream of first)
          expect(yield* endedWith(stream, "signed-out")).toEqual([opened, ended("signed-out")])
        expect((yield* probe(url, { cookie })).status).toBe(401)
        // The other session's stream is still open and hears on.
        const secondClient = clientFor(base, secondCookie)
        const record = yield* createRecord(secondClient, deal, { title: "After one sign-out" })
        expect(yield* awaitHint(second, record.id)).toEqual([opened, changed(deal, record.id)])

        expectStatus(204)(yield* secondClient.post("/api/auth/logout-everywhere"))
        expect(yield* endedWith(second, "signed-out")).toEqual([opened, changed(deal, record.id), ended("signed-out")])
        expect((yield* probe(url, { cookie: secondCookie })).status).toBe(401)
      })
  )

  it.effect("sign out everywhere ends the user's sessions and streams in every workspace, and no one else's", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const other = yield* freshWorkspace
      const { user, client } = yield* signedInMember(base, workspace)
      const { cookie: bystander } = yield* signedInMember(base, workspace)
      yield* runCli("member", "add", "--workspace", other.slug, "--email", user.email, "--role", "admin")
      const elsewhere = yield* signIn(base, { workspace: other.slug, email: user.email, password: testPassword })
      const url = `${base}/api/broadcast`
      const streamElsewhere = yield* openSse(url, { cookie: elsewhere })
      const bystanderStream = yield* openSse(url, { cookie: bystander })
      yield* streamElsewhere.waitFor((events) => events.length >= 1)

      expectStatus(204)(yield* client.post("/api/auth/logout-everywhere"))
      yield* endedWith(streamElsewhere, "signed-out")
      expect((yield* probe(`${base}/api/auth/me`, { cookie: elsewhere })).status).toBe(401)
      expect((yield* bystanderStream.events).map((event) => event.event)).toEqual(["resync"])
      expect((yield* probe(`${base}/api/auth/me`, { cookie: bystander })).status).toBe(200)
    })
  )

  it.effect("a role change ends the member's stream (end: role-changed); the reconnect sees the new rights", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      yield* (yield* Roles).grant(workspace, "deal-reader", deal, "read")
      const { client: admin } = yield* signedInMember(base, workspace)
      const { user, cookie } = yield* signedInMember(base, workspace, "deal-reader")
      const url = `${base}/api/broadcast`
      const before = yield* openSse(url, { cookie })
      const c1 = yield* createRecord(admin, company, { name: "Unseen" })
      const d1 = yield* createRecord(admin, deal, { title: "Seen" })
      expect(yield* awaitHint(before, d1.id)).toEqual([opened, changed(deal, d1.id)])

      const member = expectStatus(200)(yield* admin.put(`/api/members/${user.id}/role`, { role: "admin" }))
      expect(member).toEqual({ userId: user.id, email: user.email, name: user.name, roles: ["admin"] })
      yield* endedWith(before, "role-changed")
      expect(yield* before.events).not.toContainEqual(changed(company, c1.id))

      // The tab reconnects with the same session: now it reads companies too.
      const after = yield* openSse(url, { cookie })
      expect(after.status).toBe(200)
      const c2 = yield* createRecord(admin, company, { name: "Seen now" })
      expect(yield* awaitHint(after, c2.id)).toEqual([opened, changed(company, c2.id)])
    })
  )

  it.effect("the admin CLI's member set-role, member remove and user sign-out end the member's streams", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      yield* signedInMember(base, workspace)
      const { user, cookie } = yield* signedInMember(base, workspace)
      const url = `${base}/api/broadcast`
      const cli = (...args: ReadonlyArray<string>) =>
        Effect.map(runCli(...args), (run) => {
          expect(Exit.isSuccess(run.exit), run.stderr.join("\n")).toBe(true)
        })

      const first = yield* openSse(url, { cookie })
      yield* first.waitFor((events) => events.length >= 1)
      yield* (yield* Roles).grant(workspace, "viewer", deal, "read")
      yield* cli("member", "set-role", "--workspace", workspace.slug, "--email", user.email, "--role", "viewer")
      yield* endedWith(first, "role-changed")

      // A grant given to a role changes what its holders may read: their streams end too.
      const second = yield* openSse(url, { cookie })
      yield* second.waitFor((events) => events.length >= 1)
      yield* cli(
        "role",
        "grant",
        "--workspace",
        workspace.slug,
        "--role",
        "viewer",
        "--business-object",
        company,
        "--permission",
        "read"
      )
      yield* endedWith(second, "role-changed")

      const third = yield* openSse(url, { cookie })
      yield* third.waitFor((events) => events.length >= 1)
      yield* cli("user", "sign-out", "--email", user.email)
      yield* endedWith(third, "signed-out")

      const cookieAgain = yield* signIn(base, { workspace: workspace.slug, email: user.email, password: testPassword })
      const fourth = yield* openSse(url, { cookie: cookieAgain })
      yield* fourth.waitFor((events) => events.length >= 1)
      yield* cli("member", "remove", "--workspace", workspace.slug, "--email", user.email)
      yield* endedWith(fourth, "membership-changed")
      expect((yield* probe(url, { cookie: cookieAgain })).status).toBe(401)
    })
  )
})
