import { expect, layer } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { Agents } from "../../src/agents/Agents"
import { ApiKeys } from "../../src/auth/ApiKeys"
import { runCli } from "../support/cli"
import { readListing, rowOf } from "../support/listing"
import { freshUser, freshWorkspace, TestServices } from "../support/TestApp"

layer(TestServices, { excludeTestServices: true })("admin list commands", (it) => {
  it.effect("workspaces, users with their workspaces, members with their roles", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const user = yield* freshUser({ workspace, role: "admin" })

      const workspaces = yield* runCli("workspace", "list")
      expect(Exit.isSuccess(workspaces.exit)).toBe(true)
      expect(readListing(workspaces.stdout.join("\n"))[0]).toEqual(["SLUG", "NAME", "SCHEMA", "ID"])
      expect(rowOf(workspaces.stdout.join("\n"), 0, workspace.slug)).toEqual([
        workspace.slug,
        workspace.name,
        workspace.schema,
        workspace.id
      ])

      const users = yield* runCli("user", "list")
      expect(rowOf(users.stdout.join("\n"), 0, user.email)).toEqual([user.email, user.name, workspace.slug, user.id])

      const members = yield* runCli("member", "list", "--workspace", workspace.slug)
      expect(members.stdout.join("\n").split("\n")).toEqual([
        expect.stringMatching(/^EMAIL +NAME +ROLES +USER ID$/),
        expect.stringMatching(new RegExp(`^${user.email} +${user.name} +admin +${user.id}$`))
      ])
    })
  )

  it.effect("API keys (never their secret) with their holder, roles and state; agents with roles and live keys", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const service = yield* (yield* ApiKeys).create(workspace, "importer", "admin")
      const revoked = yield* (yield* ApiKeys).create(workspace, "old importer", "admin")
      yield* (yield* ApiKeys).revoke(workspace, revoked.apiKey.id)
      const agent = yield* (yield* Agents).create(workspace, "Night shift", "admin")

      const keys = yield* runCli("apikey", "list", "--workspace", workspace.slug)
      expect(Exit.isSuccess(keys.exit)).toBe(true)
      const text = keys.stdout.join("\n")
      for (const key of [service.key, revoked.key, agent.key]) expect(text).not.toContain(key.split(".")[2])
      expect(rowOf(text, 0, service.apiKey.id)).toEqual([
        service.apiKey.id,
        "importer",
        "service account",
        "admin",
        expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\dZ$/),
        "active"
      ])
      expect(rowOf(text, 0, revoked.apiKey.id)?.[5]).toMatch(/^revoked \d{4}-\d\d-\d\d \d\d:\d\dZ$/)
      expect(rowOf(text, 2, "agent Night shift")?.[3]).toBe("(the agent's)")
      // Too wide for 100 columns with its revoked key: narrowed, the ids whole.
      for (const line of text.split("\n")) expect(line.length).toBeLessThanOrEqual(100)

      const agents = yield* runCli("agent", "list", "--workspace", workspace.slug)
      expect(rowOf(agents.stdout.join("\n"), 0, "Night shift")).toEqual(["Night shift", "admin", "1", agent.agent.id])

      const empty = yield* freshWorkspace
      const none = yield* runCli("agent", "list", "--workspace", empty.slug)
      expect(none.stdout).toEqual([`no agents in ${empty.slug}`])
    })
  )
})
