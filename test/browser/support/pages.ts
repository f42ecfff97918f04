import type { Page } from "playwright-core"

/** Signs in through the page's own form and waits for the signed-in header. */
export const signInThroughForm = async (
  page: Page,
  base: string,
  who: { readonly workspace: string; readonly email: string; readonly password: string; readonly name: string }
) => {
  await page.goto(`${base}/`)
  await page.getByLabel("Workspace", { exact: true }).fill(who.workspace)
  await page.getByLabel("Email", { exact: true }).fill(who.email)
  await page.getByLabel("Password", { exact: true }).fill(who.password)
  await page.getByRole("button", { name: "Sign in" }).click()
  await page.getByText(`Signed in as ${who.name}`).waitFor()
}

/** The parts of a record page a person looks at, found by role and label. */
export const recordPage = (page: Page) => {
  const form = page.getByRole("form", { name: /^Edit / })
  return {
    form,
    field: (label: string) => form.getByLabel(label, { exact: true }),
    group: (name: string) => form.getByRole("group", { name, exact: true }),
    save: form.getByRole("button", { name: "Save", exact: true }),
    saveStatus: form.getByRole("status"),
    editors: page.getByRole("status", { name: "Other editors" }),
    timelineRows: page.getByRole("list", { name: "Timeline entries" }).getByRole("article"),
    timeline: page.getByRole("region", { name: "Timeline" })
  }
}
