import { describe, expect, it } from "vitest"
import { businessObjectLabel, humanize, plural, shortId } from "../../web/src/labels"
import { activityPath, correlationPath, listPath, parseRoute, recordPath } from "../../web/src/router"

describe("the page's addresses", () => {
  it("parse into routes, and the paths it makes parse back", () => {
    expect(parseRoute("/")).toEqual({ page: "home" })
    expect(parseRoute("/records/crm/deal")).toEqual({ page: "list", businessObject: "crm/deal" })
    expect(parseRoute("/records/crm/deal/")).toEqual({ page: "list", businessObject: "crm/deal" })
    expect(parseRoute("/records/crm/deal/r-1")).toEqual({ page: "record", businessObject: "crm/deal", id: "r-1" })
    expect(parseRoute("/records/crm")).toEqual({ page: "home" })
    expect(parseRoute("/records/crm/deal/r-1/extra")).toEqual({ page: "home" })
    expect(parseRoute("/elsewhere/crm/deal")).toEqual({ page: "home" })
    expect(parseRoute(recordPath("crm/deal", "a b/c"))).toEqual({
      page: "record",
      businessObject: "crm/deal",
      id: "a b/c"
    })
    expect(parseRoute(listPath("crm/activity"))).toEqual({ page: "list", businessObject: "crm/activity" })
    expect(parseRoute(activityPath)).toEqual({ page: "activity" })
    expect(parseRoute(correlationPath("c-1"))).toEqual({ page: "correlation", correlationId: "c-1" })
    expect(parseRoute("/correlations")).toEqual({ page: "home" })
    expect(parseRoute("/activity/x")).toEqual({ page: "home" })
  })
})

describe("labels", () => {
  it("turn names into words", () => {
    expect(humanize("lineItems")).toBe("Line items")
    expect(humanize("closeDate")).toBe("Close date")
    expect(humanize("won_deals")).toBe("Won deals")
    expect(businessObjectLabel("crm/deal")).toBe("Deal")
    expect(plural("Deal")).toBe("Deals")
    expect(plural("Company")).toBe("Companies")
    expect(plural("Activity")).toBe("Activities")
    expect(plural("Address")).toBe("Addresses")
    expect(shortId("li-install")).toBe("li-install")
    expect(shortId("2f6dde3e996adbc1b5a4e648")).toBe("2f6dde3e")
  })
})
