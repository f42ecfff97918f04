import { field } from "../Field"
import type { Plugin } from "../Plugin"

/** The demo CRM: companies, deals and activities. */
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
      }
    },
    activity: {
      fields: { subject: field.string, company: field.string }
    }
  }
}
