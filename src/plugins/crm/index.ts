import { Effect, Option } from "effect"
import type { NotFound } from "../../api/errors"
import type { RecordValues } from "../../api/Json"
import { field } from "../../api/Field"
import type { Plugin } from "../Plugin"
import { PluginJobs } from "../PluginJobs"
import { PluginRecords } from "../PluginRecords"
import type { PluginRecordsShape } from "../PluginRecords"
import { seed } from "./seed"

const text = (value: unknown, fallback: string) => (typeof value === "string" ? value : fallback)

/** The deal stages, in the order a deal moves through them. */
export const dealStages = ["lead", "open", "qualified", "proposal", "negotiation", "won", "lost"] as const

/**
 * `{company}` when `id` names a live company, else `{}`: a link is checked on
 * every write, and a deal's company may have been deleted or archived since.
 */
const companyLink = (records: PluginRecordsShape, id: unknown): Effect.Effect<RecordValues, NotFound> =>
  typeof id !== "string"
    ? Effect.succeed({})
    : Effect.map(
        records.get("crm/company", id),
        (company): RecordValues =>
          Option.isSome(company) && company.value.state === "operational" ? { company: id } : {}
      )

/** `{deal}` when `id` names a live deal (only a live record may be linked), else `{}`. */
const dealLink = (records: PluginRecordsShape, id: string): Effect.Effect<RecordValues, NotFound> =>
  Effect.map(
    records.get("crm/deal", id),
    (deal): RecordValues => (Option.isSome(deal) && deal.value.state === "operational" ? { deal: id } : {})
  )

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
  label: "CRM",
  businessObjects: {
    company: {
      label: "Company",
      title: "name",
      fields: { name: field.required(field.string), website: field.string, wonDeals: field.number },
      columns: ["name", "website", "wonDeals"]
    },
    deal: {
      label: "Deal",
      title: "title",
      fields: {
        title: field.required(field.string),
        stage: field.choice(dealStages),
        amount: field.decimal,
        closeDate: field.date,
        company: field.link("crm/company"),
        address: field.struct({ street: field.string, city: field.string, country: field.string }),
        lineItems: field.collection({ product: field.string, quantity: field.number, price: field.decimal })
      },
      columns: ["title", "stage", "amount", "company", "closeDate"],
      actions: {
        close: {
          label: "Close deal",
          description: "Mark the deal as won",
          run: (deal) =>
            Effect.flatMap(PluginRecords, (records) => records.update("crm/deal", deal.id, { stage: "won" }))
        },
        "follow-up": {
          label: "Follow up",
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
      label: "Activity",
      title: "subject",
      fields: {
        subject: field.required(field.string),
        company: field.link("crm/company"),
        deal: field.link("crm/deal")
      },
      columns: ["subject", "company"]
    }
  },
  listeners: [
    {
      name: "crm/count-won-deals",
      label: "Count won deals on the company",
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
      label: "Log won deals as an activity",
      businessObject: "crm/company",
      operations: ["updated"],
      run: (event) =>
        Effect.gen(function* () {
          const wonDeals = event.after?.wonDeals
          if (wonDeals === event.before?.wonDeals || typeof wonDeals !== "number") return
          const records = yield* PluginRecords
          // Counted because a deal was won (count-won-deals): that deal is the activity's too.
          const wonDeal =
            event.cause?.kind === "event" && event.cause.businessObject === "crm/deal"
              ? yield* dealLink(records, event.cause.businessObjectId)
              : {}
          yield* records.create("crm/activity", {
            subject: `${String(event.after?.name ?? "Company")} has won ${wonDeals} deal${wonDeals === 1 ? "" : "s"}`,
            company: event.businessObjectId,
            ...wonDeal
          })
        })
    }
  ],
  jobs: {
    "follow-up": {
      label: "Follow-up activity",
      description: "Logs an activity to follow up on a deal",
      run: (payload) =>
        Effect.gen(function* () {
          const records = yield* PluginRecords
          const deal = yield* records.get("crm/deal", text(payload.dealId, ""))
          // The deal may be gone by the time the job runs: then there is nothing to follow up.
          if (Option.isNone(deal)) return
          yield* records.create("crm/activity", {
            subject: `Follow up on ${text(deal.value.values.title, "the deal")}`,
            ...(yield* companyLink(records, deal.value.values.company)),
            ...(deal.value.state === "operational" ? { deal: deal.value.id } : {})
          })
        })
    }
  },
  workflows: [
    {
      id: "note-archived-deal",
      label: "Note on archived deals",
      trigger: { businessObject: "crm/deal", operations: ["archived"] },
      run: (event) =>
        Effect.gen(function* () {
          const records = yield* PluginRecords
          yield* records.create("crm/activity", {
            subject: `Deal "${text(event.after?.title, event.businessObjectId)}" was archived`,
            ...(yield* companyLink(records, event.after?.company))
          })
        })
    }
  ],
  seed
}
