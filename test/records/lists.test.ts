import { expect, layer } from "@effect/vitest"
import { SqlClient } from "effect/sql"
import { Effect, Option } from "effect"
import { PluginRegistry } from "../../src/plugins/PluginRegistry"
import { planList } from "../../src/records/ListPlan"
import type { RecordList } from "../../src/api/RecordQuery"
import type { RecordBacklinks } from "../../src/api/RecordQuery"
import { Roles } from "../../src/auth/Roles"
import { createRecord, expectStatus, signedInMember } from "../support/api"
import type { Client } from "../support/api"
import { baseUrl, freshWorkspace, testApp } from "../support/TestApp"

/**
 * Lists over real HTTP and PostgreSQL (docs/web.md, "Lists"): sort by a
 * column or a record time, filter by field value, search titles, keyset
 * pages that neither skip nor repeat a record under ties; what the request
 * names wrongly is a 400 naming it; read permissions as for any read.
 */

type ListBody = typeof RecordList.Encoded
type BacklinksBody = typeof RecordBacklinks.Encoded

const list = (client: Client, businessObject: string, query: string) =>
  Effect.map(
    client.get(`/api/records/${businessObject}?${query}`),
    (response) => expectStatus(200)(response) as ListBody
  )

/** Every page of a list, following `nextCursor`. */
const allPages = (client: Client, businessObject: string, query: string, from: string | null = null) =>
  Effect.gen(function* () {
    const pages: Array<ListBody> = []
    let cursor: string | null = from
    do {
      const page: ListBody = yield* list(
        client,
        businessObject,
        cursor === null ? query : `${query}&cursor=${encodeURIComponent(cursor)}`
      )
      pages.push(page)
      cursor = page.nextCursor ?? null
    } while (cursor !== null)
    return pages
  })

const titles = (body: ListBody) => body.records.map((record) => record.values.title)

layer(testApp(), { excludeTestServices: true })("record lists", (it) => {
  it.effect("sorts by a column both ways (empty values last), filters by stage and amount, searches titles", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const { client } = yield* signedInMember(yield* baseUrl, workspace)
      const deals = [
        { title: "Alpha kiosk", stage: "won", amount: "900.50" },
        { title: "Beta rollout", stage: "open", amount: "12000" },
        { title: "Gamma kiosk", stage: "won", amount: "15000.00" },
        { title: "Delta pilot", stage: "won" },
        { title: "Epsilon", stage: "lost", amount: "80" }
      ]
      for (const values of deals) yield* createRecord(client, "crm/deal", values)

      const ascending = yield* list(client, "crm/deal", "sort=amount&order=asc")
      expect(titles(ascending)).toEqual(["Epsilon", "Alpha kiosk", "Beta rollout", "Gamma kiosk", "Delta pilot"])
      const descending = yield* list(client, "crm/deal", "sort=amount&order=desc")
      expect(titles(descending)).toEqual(["Gamma kiosk", "Beta rollout", "Alpha kiosk", "Epsilon", "Delta pilot"])

      const won = yield* list(client, "crm/deal", "sort=amount&order=desc&filter=stage%3Dwon")
      expect(titles(won)).toEqual(["Gamma kiosk", "Alpha kiosk", "Delta pilot"])
      const bigWon = yield* list(client, "crm/deal", "sort=title&filter=stage%3Dwon&filter=amount%3E%3D1000")
      expect(titles(bigWon)).toEqual(["Gamma kiosk"])
      const noAmount = yield* list(client, "crm/deal", "filter=amount%3D")
      expect(titles(noAmount)).toEqual(["Delta pilot"])

      const kiosks = yield* list(client, "crm/deal", "q=KIOSK&sort=title")
      expect(titles(kiosks)).toEqual(["Alpha kiosk", "Gamma kiosk"])
      const prefix = yield* list(client, "crm/deal", "q=gam%20kio")
      expect(titles(prefix)).toEqual(["Gamma kiosk"])
      const nothing = yield* list(client, "crm/deal", "q=zeta")
      expect(nothing).toEqual({ records: [], nextCursor: null })

      const newest = yield* list(client, "crm/deal", "")
      expect(titles(newest)).toEqual(deals.map((deal) => deal.title).reverse())
      const updated = yield* list(client, "crm/deal", "sort=updatedAt&order=asc")
      expect(titles(updated)).toEqual(deals.map((deal) => deal.title))
    })
  )

  it.effect("keyset pages under ties: every record once, in order, as the sort says, with writes in between", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const { client } = yield* signedInMember(yield* baseUrl, workspace)
      // Eleven deals, three amounts: most sort keys are shared, so the id must break the ties.
      const created = yield* Effect.forEach(
        Array.from({ length: 11 }, (_, i) => i),
        (i) =>
          createRecord(client, "crm/deal", {
            title: `Deal ${i}`,
            stage: "open",
            ...(i % 4 === 3 ? {} : { amount: String(i % 3) })
          })
      )
      for (const order of ["asc", "desc"] as const) {
        const pages = yield* allPages(client, "crm/deal", `sort=amount&order=${order}&limit=2`)
        expect(pages).toHaveLength(6)
        const seen = pages.flatMap((page) => page.records)
        expect(new Set(seen.map((record) => record.id)).size).toBe(11)
        const key = (record: (typeof seen)[number]) => record.values.amount
        const withAmount = seen.filter((record) => key(record) !== undefined)
        const sorted = [...withAmount].sort((a, b) => {
          const byAmount = Number(key(a)) - Number(key(b))
          return (order === "asc" ? 1 : -1) * (byAmount !== 0 ? byAmount : a.id < b.id ? -1 : 1)
        })
        expect(withAmount.map((record) => record.id)).toEqual(sorted.map((record) => record.id))
        // Empty amounts come last either way, in id order along the sort's direction.
        const empty = seen.slice(withAmount.length)
        expect(empty.every((record) => key(record) === undefined)).toBe(true)
        const emptyIds = empty.map((record) => record.id)
        expect(emptyIds).toEqual([...emptyIds].sort((a, b) => (order === "asc" ? (a < b ? -1 : 1) : a < b ? 1 : -1)))
      }

      // A page boundary holds when records arrive before it: the next pages are the rest, each once, in order.
      const whole = (yield* list(client, "crm/deal", "sort=amount&order=asc")).records.map((record) => record.id)
      const first = yield* list(client, "crm/deal", "sort=amount&order=asc&limit=4")
      expect(first.records.map((record) => record.id)).toEqual(whole.slice(0, 4))
      yield* createRecord(client, "crm/deal", { title: "Newcomer", stage: "open", amount: "0" })
      const rest = yield* allPages(client, "crm/deal", "sort=amount&order=asc&limit=4", first.nextCursor)
      expect(rest.flatMap((page) => page.records.map((record) => record.id))).toEqual(whole.slice(4))
      expect(created).toHaveLength(11)
    })
  )

  it.effect("a title search is served by the business object's title index, made with the workspace", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const sql = yield* SqlClient.SqlClient
      const registered = Option.getOrThrow((yield* PluginRegistry).find("crm/deal"))
      const planned = planList(
        {
          businessObject: "crm/deal",
          fields: registered.definition.fields,
          columns: registered.definition.columns,
          title: registered.title
        },
        { q: "kiosk", limit: 10 }
      )
      if (planned._tag !== "Plan") throw new Error("refused")
      // Enough deals for the planner to weigh its indexes (written behind the service's back: the schema is dropped after).
      const records = sql(workspace.table("records"))
      yield* sql`INSERT INTO ${records} (business_object, id, state, values)
        SELECT 'crm/deal', gen_random_uuid(), 'operational', jsonb_build_object('title', 'Deal ' || i)
        FROM generate_series(1, 3000) AS i`.pipe(Effect.orDie)
      yield* sql`ANALYZE ${records}`.pipe(Effect.orDie)
      const explained = yield* sql
        .unsafe(
          `EXPLAIN SELECT id FROM "${workspace.schema}"."records"
          WHERE ${["business_object = $1", ...planned.plan.where].join(" AND ")}`,
          ["crm/deal", ...planned.plan.params]
        )
        .pipe(Effect.orDie)
      const indexes = yield* sql<{
        readonly indexname: string
      }>`SELECT indexname FROM pg_indexes WHERE schemaname = ${workspace.schema} AND indexname LIKE 'records_title_%'`.pipe(
        Effect.orDie
      )
      expect(indexes).toHaveLength(3)
      expect(JSON.stringify(explained)).toMatch(/records_title_[0-9a-f]{16}/)
    })
  )

  it.effect("a field, sort, option or cursor the list does not know is a 400 naming it", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const { client } = yield* signedInMember(yield* baseUrl, workspace)
      yield* createRecord(client, "crm/deal", { title: "One", stage: "open", amount: "1" })
      yield* createRecord(client, "crm/deal", { title: "Two", stage: "open", amount: "2" })
      const refused = (query: string, names: ReadonlyArray<string>) =>
        Effect.map(client.get(`/api/records/crm/deal?${query}`), (response) => {
          const body = expectStatus(400)(response) as { readonly _tag: string; readonly message: string }
          expect(body._tag).toBe("BadRequest")
          for (const name of names) expect(body.message).toContain(name)
        })
      yield* refused("sort=colour", ["sort: colour"])
      yield* refused("sort=address", ["sort: address"])
      yield* refused("sort=company", ["company is a link column"])
      yield* refused("filter=colour%3Dred&filter=size%3E1", ["colour", "size"])
      yield* refused("filter=stage%3Dmaybe", ["stage has no option maybe"])
      yield* refused("filter=title%3E%3Da", ["ranges apply"])
      yield* refused("filter=amount%3E%3Dlots", ["amount>=lots"])
      yield* refused("filter=nonsense", ["nonsense"])
      yield* refused(`q=${"a".repeat(201)}`, ["q: at most 200"])
      yield* refused("cursor=not-a-cursor", ["cursor"])
      yield* refused("cursor=%25%25", ["cursor"])
      const page = yield* list(client, "crm/deal", "sort=amount&limit=1")
      const cursor = encodeURIComponent(page.nextCursor ?? "")
      yield* refused(`sort=title&limit=1&cursor=${cursor}`, ["cursor: made for sort=amount"])
      yield* refused(`sort=amount&order=desc&limit=1&cursor=${cursor}`, ["cursor: made for sort=amount&order=asc"])
      const tampered = Buffer.from(JSON.stringify(["amount", "asc", "1; DROP", crypto.randomUUID()])).toString(
        "base64url"
      )
      yield* refused(`sort=amount&cursor=${tampered}`, ["cursor"])
      // The list still answers.
      expect(titles(yield* list(client, "crm/deal", "sort=amount"))).toEqual(["One", "Two"])
    })
  )

  it.effect(
    "lists and backlinks read as today: 403 without the grant; backlinks leave out what the caller may not read",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const workspace = yield* freshWorkspace
        const { client } = yield* signedInMember(base, workspace)
        const roles = yield* Roles
        yield* roles.grant(workspace, "company-and-deal-reader", "crm/company", "read")
        yield* roles.grant(workspace, "company-and-deal-reader", "crm/deal", "read")
        const reader = (yield* signedInMember(base, workspace, "company-and-deal-reader")).client

        const acme = yield* createRecord(client, "crm/company", { name: "Acme" })
        const other = yield* createRecord(client, "crm/company", { name: "Other" })
        const kiosk = yield* createRecord(client, "crm/deal", { title: "Kiosk", stage: "open", company: acme.id })
        const rollout = yield* createRecord(client, "crm/deal", { title: "Rollout", stage: "won", company: acme.id })
        yield* createRecord(client, "crm/deal", { title: "Elsewhere", stage: "open", company: other.id })
        yield* createRecord(client, "crm/activity", { subject: "Called Acme", company: acme.id, deal: kiosk.id })

        const links = (caller: Client, path: string) =>
          Effect.map(
            caller.get(`/api/records/${path}/links?limit=1`),
            (response) => expectStatus(200)(response) as BacklinksBody
          )
        const ofAcme = yield* links(client, `crm/company/${acme.id}`)
        expect(
          ofAcme.groups.map((group) => [group.businessObject, group.field, group.total, group.records.map((r) => r.id)])
        ).toEqual([
          ["crm/deal", "company", 2, [rollout.id]],
          ["crm/activity", "company", 1, [expect.any(String)]]
        ])
        const ofKiosk = yield* links(client, `crm/deal/${kiosk.id}`)
        expect(ofKiosk.groups.map((group) => [group.businessObject, group.field, group.total])).toEqual([
          ["crm/activity", "deal", 1]
        ])
        // The reader may read deals, not activities: their group is left out.
        const asReader = yield* links(reader, `crm/company/${acme.id}`)
        expect(asReader.groups.map((group) => [group.businessObject, group.total])).toEqual([["crm/deal", 2]])
        expect((yield* reader.get(`/api/records/crm/activity?sort=subject`)).status).toBe(403)
        expect((yield* reader.get(`/api/records/crm/activity/${kiosk.id}/links`)).status).toBe(403)
        expect((yield* client.get(`/api/records/crm/company/${crypto.randomUUID()}/links`)).status).toBe(404)
        expect((yield* client.get(`/api/records/crm/nothing/${acme.id}/links`)).status).toBe(404)
        // The company's deals, all of them, through the list filter the backlinks stand for.
        const acmeDeals = yield* list(reader, "crm/deal", `filter=company%3D${acme.id}&sort=title`)
        expect(titles(acmeDeals)).toEqual(["Kiosk", "Rollout"])
      })
  )
})
