import { describe, expect, it } from "vitest"
import type { Fields } from "../../src/api/Field"
import {
  ariaSort,
  filterColumns,
  formatListState,
  nextSort,
  parseListState,
  urlFilterFields
} from "../../web/src/records/listState"

/** A list's state in its URL (docs/web.md, "Lists"): what a reload or a shared link shows again. */

const fields: Fields = {
  title: { kind: "string" },
  stage: { kind: "choice", options: ["open", "won"] },
  amount: { kind: "decimal" },
  company: { kind: "link", target: "crm/company" },
  owner: { kind: "link", target: "crm/user" }
}
const columns = ["title", "stage", "amount", "company"]

describe("list state in the URL", () => {
  it("filters are offered for choice and link columns; the URL may also filter on any link field", () => {
    expect(filterColumns(fields, columns)).toEqual(["stage", "company"])
    expect(urlFilterFields(fields, columns)).toEqual(["stage", "company", "owner"])
  })

  it("reads back what it writes, and drops what the list does not filter on", () => {
    const state = { sort: "amount", order: "desc" as const, q: "kiosk", filters: { stage: "won", company: "c-1" } }
    const search = formatListState(state)
    expect(search).toBe("?sort=amount&order=desc&q=kiosk&stage=won&company=c-1")
    expect(parseListState(search, filterColumns(fields, columns))).toEqual(state)
    expect(parseListState("?title=x&stage=&order=sideways", filterColumns(fields, columns))).toEqual({
      sort: undefined,
      order: undefined,
      q: "",
      filters: {}
    })
    expect(formatListState({ sort: undefined, order: undefined, q: " ", filters: {} })).toBe("")
  })

  it("a header click sorts ascending, then descending, then back to the default; aria-sort says which", () => {
    const start = parseListState("", [])
    const once = nextSort(start, "amount")
    expect([once.sort, once.order, ariaSort(once, "amount"), ariaSort(once, "title")]).toEqual([
      "amount",
      "asc",
      "ascending",
      "none"
    ])
    const twice = nextSort(once, "amount")
    expect([twice.order, ariaSort(twice, "amount")]).toEqual(["desc", "descending"])
    const thrice = nextSort(twice, "amount")
    expect([thrice.sort, thrice.order, ariaSort(thrice, "amount")]).toEqual([undefined, undefined, "none"])
    expect(nextSort(twice, "title")).toMatchObject({ sort: "title", order: "asc" })
  })
})
