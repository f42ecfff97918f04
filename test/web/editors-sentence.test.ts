import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { editorsSentence, isThisBrowsers } from "../../web/src/presence/editorsSentence"

/** The presence notice never tells a person that they themselves are editing: their other devices read "you, on another device". */

const ada = (id: string) => ({ id, name: "Ada Lovelace", userId: "u-ada" })
const grace = (id: string) => ({ id, name: "Grace Hopper", userId: "u-grace" })

describe("editorsSentence", () => {
  it("leaves out the forms of all this browser's tabs, and says nobody when that is all", () => {
    expect(editorsSentence([ada("this-browser-tab1"), ada("this-browser-tab2")], "u-ada", "this-browser")).toBe(
      "Nobody else is editing this record."
    )
    expect(editorsSentence([ada("this-browser-tab1"), ada("this-browserx")], "u-ada", "this-browser")).toBe(
      "You, on another device, are editing this record."
    )
    expect(editorsSentence([], "u-ada", "this-browser")).toBe("Nobody else is editing this record.")
  })

  it("names another person once, however many forms they hold", () => {
    expect(editorsSentence([grace("g-1"), grace("g-2"), ada("mine")], "u-ada", "mine")).toBe(
      "Grace Hopper is editing this record."
    )
  })

  it("the same user on another device is 'you, on another device', never their own name", () => {
    expect(editorsSentence([ada("laptop"), ada("mine")], "u-ada", "mine")).toBe(
      "You, on another device, are editing this record."
    )
    expect(editorsSentence([grace("g-1"), ada("laptop"), ada("phone")], "u-ada", "mine")).toBe(
      "Grace Hopper and you, on another device, are editing this record."
    )
  })

  const editor = Schema.Struct({
    id: Schema.String,
    name: Schema.Literals(["Ada Lovelace", "Grace Hopper", "Alan Turing"]),
    userId: Schema.Literals(["u-ada", "u-grace", "u-alan"])
  })
  const nameOf = { "u-ada": "Ada Lovelace", "u-grace": "Grace Hopper", "u-alan": "Alan Turing" } as const

  it.prop(
    "whoever is listed, the viewer's own name is never in it, and each other person is named exactly once",
    { editors: Schema.Array(editor), me: Schema.Literals(["u-ada", "u-grace", "u-alan"]) },
    ({ editors, me }) => {
      const consistent = editors.map((e) => ({ ...e, name: nameOf[e.userId] }))
      const sentence = editorsSentence(consistent, me, "own-form")
      expect(sentence).not.toContain(nameOf[me])
      for (const other of new Set(consistent.map((e) => e.userId))) {
        if (other === me) continue
        expect(sentence.split(nameOf[other]).length - 1).toBe(1)
      }
      expect(sentence.includes("you, on another device") || sentence.includes("You, on another device")).toBe(
        consistent.some((e) => e.userId === me && !isThisBrowsers(e.id, "own-form"))
      )
    }
  )
})
