import type { SeedItem } from "../Plugin"

/** What a new workspace starts with: one company and one open deal of it. */
export const seed: ReadonlyArray<SeedItem> = [
  {
    key: "acme",
    businessObject: "crm/company",
    values: () => ({ name: "Acme Corporation", website: "https://acme.example", wonDeals: 0 })
  },
  {
    key: "acme-pilot",
    businessObject: "crm/deal",
    values: (idOf) => ({
      title: "Acme pilot",
      stage: "negotiation",
      amount: "12500.00",
      closeDate: "2026-12-15",
      company: idOf("acme"),
      address: { street: "1 Main Street", city: "Springfield", country: "US" },
      lineItems: [
        { id: "pilot-licences", product: "Pilot licences", quantity: 25, price: "400.00" },
        { id: "onboarding", product: "Onboarding", quantity: 1, price: "2500.00" }
      ]
    })
  }
]
