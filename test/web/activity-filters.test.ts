import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Schema } from "effect"
import { activityFilterPath, parseActivityFilters } from "../../web/src/activity/activityFilters"
import { parseRoute } from "../../web/src/router"

/** Activity's filters live in the URL, so a narrowed Activity can be linked. */

describe("Activity filters in the URL", () => {
  it("no filter is the plain Activity path; filters are its query; others are ignored", () => {
    expect(activityFilterPath({})).toBe("/activity")
    const path = activityFilterPath({ businessObject: "crm/deal", actor: "workflow:crm/x", record: "" })
    expect(path).toBe("/activity?businessObject=crm%2Fdeal&actor=workflow%3Acrm%2Fx")
    const url = new URL(path, "http://page")
    expect(parseRoute(url.pathname)).toEqual({ page: "activity" })
    expect(parseActivityFilters(`${url.search}&cursor=x&record=`)).toEqual({
      businessObject: "crm/deal",
      actor: "workflow:crm/x"
    })
  })

  const text = Schema.String.check(Schema.isMinLength(1))
  const filters = Schema.Struct({
    businessObject: Schema.optional(text),
    actor: Schema.optional(text),
    record: Schema.optional(text),
    from: Schema.optional(text),
    to: Schema.optional(text)
  })
  it.prop("a link's filters read back as they were", { generated: Arbitrary.schema(filters) }, ({ generated }) => {
    // A lone surrogate is no text a URL can carry (it becomes U+FFFD); ids and names never hold one.
    const given = Object.fromEntries(
      Object.entries(generated).flatMap(([name, value]) =>
        value === undefined ? [] : [[name, value.replace(/[\uD800-\uDFFF]/g, "x")]]
      )
    )
    const url = new URL(activityFilterPath(given), "http://page")
    expect(url.pathname).toBe("/activity")
    expect(parseActivityFilters(url.search)).toEqual(given)
  })
})
