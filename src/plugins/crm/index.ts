import { Effect, Option } from "effect"
import { field } from "../../api/Field"
import type { Plugin } from "../Plugin"
import { PluginJobs } from "../PluginJobs"
import { PluginRecords } from "../PluginRecords"
import { seed } from "./seed"

const text = (value: unknown, fallback: string) => (typeof value === "string" ? value : fallback)

/**
 * The demo CRM: companies, deals and activities. Closing a deal is the
 * cascade A -> B -> C of the spec: the `close` action sets the deal's stage
 * to won (A); a listener counts it on the deal's company (B); another logs
 * an activity for the company (C). All in one unit of work.
 * The `follow-up` action enqueues a background job that logs an activity
 * later, as the user who asked; archiving a deal starts a workflow that
 * notes it in an activity, as `workflow:crm/note-archived-deal`.
 */
export const crm: Plugin = {
  namespace: "crm",
  businessObjects: {
    company: {
      fields: { name: field.string, website: field.string, wonDeals: field.number }
    },
    deal: {
      fields: {
        title: field.string,
        stage: field.string,
        amount: field.decimal,
        closeDate: field.date,
        company: field.string,
        address: field.struct({ street: field.string, city: field.string, country: field.string }),
        lineItems: field.collection({ product: field.string, quantity: field.number, price: field.decimal })
      },
      actions: {
        close: {
          description: "Mark the deal as won",
          run: (deal) =>
            Effect.flatMap(PluginRecords, (records) => records.update("crm/deal", deal.id, { stage: "won" }))
        },
        "follow-up": {
          description: "Log a follow-up activity for the deal, in the background",
          run: (deal) =>
            Effect.as(
              Effect.flatMap(PluginJobs, (jobs) => jobs.enqueue("crm/follow-up", { dealId: deal.id })),
              deal
            )
        }
      }
    },
    activity: {
      fields: { subject: field.string, company: field.string }
    }
  },
  listeners: [
    {
      name: "crm/count-won-deals",
      businessObject: "crm/deal",
      operations: ["updated"],
      run: (event) =>
        Effect.gen(function* () {
          const companyId = event.after?.company
          if (event.after?.stage !== "won" || event.before?.stage === "won" || typeof companyId !== "string") return
          const records = yield* PluginRecords
          const company = yield* records.get("crm/company", companyId)
          // A deal may name a company that is gone or not (yet) live: nothing to count then.
          if (Option.isNone(company) || company.value.state !== "operational") return
          const wonDeals = company.value.values.wonDeals
          yield* records.update("crm/company", companyId, {
            wonDeals: (typeof wonDeals === "number" ? wonDeals : 0) + 1
          })
        })
    },
    {
      name: "crm/log-won-deals",
      businessObject: "crm/company",
      operations: ["updated"],
      run: (event) =>
        Effect.gen(function* () {
          const wonDeals = event.after?.wonDeals
          if (wonDeals === event.before?.wonDeals || typeof wonDeals !== "number") return
          const records = yield* PluginRecords
          yield* records.create("crm/activity", {
            subject: `${String(event.after?.name ?? "Company")} has won ${wonDeals} deal${wonDeals === 1 ? "" : "s"}`,
            company: event.businessObjectId
          })
        })
    }
  ],
  jobs: {
    "follow-up": {
      description: "Logs an activity to follow up on a deal",
      run: (payload) =>
        Effect.gen(function* () {
          const records = yield* PluginRecords
          const deal = yield* records.get("crm/deal", text(payload.dealId, ""))
          // The deal may be gone by the time the job runs: then there is nothing to follow up.
          if (Option.isNone(deal)) return
          yield* records.create("crm/activity", {
            subject: `Follow up on ${text(deal.value.values.title, "the deal")}`,
            company: text(deal.value.values.company, "")
          })
        })
    }
  },
  workflows: [
    {
      id: "note-archived-deal",
      trigger: { businessObject: "crm/deal", operations: ["archived"] },
      run: (event) =>
        Effect.flatMap(PluginRecords, (records) =>
          records.create("crm/activity", {
            subject: `Deal "${text(event.after?.title, event.businessObjectId)}" was archived`,
            company: text(event.after?.company, "")
          })
        ).pipe(Effect.asVoid)
    }
  ],
  seed
}
