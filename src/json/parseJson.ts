import { isJsonArray } from "../api/Json"
import type { Json } from "../api/Json"

/** The engine's own reader, kept before `guardJsonParse` replaces the global one. */
const nativeParse = JSON.parse

/**
 * `JSON.parse`, with every object key read as the text says on the engines
 * this runs on. Every JSON text the service and its client read goes through
 * here (test/architecture/json-parse.test.ts keeps it so); what libraries
 * parse in the service's process, through `guardJsonParse`.
 *
 * V8 from 12.8 (Node 24, Chromium of the same time) can give an escaped key
 * the name of a key with a backslash that an earlier text had at the same
 * place: once `{"a":1,"\\":2}` has been parsed, `{"a":1,"\n":2}` reads back
 * as `{"a":1,"\\":2}` (nodejs/node#63785). A value read under another key
 * would be checked, stored and hashed into the ledger under it, and one text
 * can do that to every later one. A key read wrong is always such an earlier
 * key, so it holds a backslash: a text without a backslash, or whose parsed
 * keys hold none, is read natively (nearly all of them); the rest is read
 * again with each key decoded on its own.
 */
export const parseJson = (text: string): Json => {
  const value: Json = nativeParse(text)
  return text.includes("\\") && someKeyHoldsABackslash(value) ? parseKeyByKey(text) : value
}

const someKeyHoldsABackslash = (value: Json): boolean => {
  const pending: Array<Json> = [value]
  while (pending.length > 0) {
    const next = pending.pop()
    if (next === null || next === undefined || typeof next !== "object") continue
    if (isJsonArray(next)) {
      for (const element of next) pending.push(element)
      continue
    }
    for (const key in next) {
      if (key.includes("\\")) return true
      const member = next[key]
      if (member !== undefined) pending.push(member)
    }
  }
  return false
}

/** The tokens of a text already known to be JSON: punctuation, strings, and numbers or literals. */
const tokens = /[{}[\],:]|"(?:[^"\\]|\\.)*"|[^\s{}[\],:"]+/g

interface Open {
  readonly container: { [key: string]: Json } | Array<Json>
  key: string | undefined
  expectingKey: boolean
}

/**
 * The value of a text `JSON.parse` accepted, built without its object
 * reader: each string, number and literal is `JSON.parse` of its token alone
 * (no object, so no key to misread), and each member is defined as
 * `JSON.parse` defines it (own, in first-seen order, the last duplicate's
 * value, `__proto__` an ordinary key).
 */
const parseKeyByKey = (text: string): Json => {
  const open: Array<Open> = []
  let root: Json = null
  const place = (value: Json) => {
    const top = open.at(-1)
    if (top === undefined) root = value
    else if (Array.isArray(top.container)) top.container.push(value)
    else
      Object.defineProperty(top.container, top.key ?? "", {
        value,
        writable: true,
        enumerable: true,
        configurable: true
      })
  }
  for (const [token] of text.matchAll(tokens)) {
    const top = open.at(-1)
    switch (token) {
      case "{":
        open.push({ container: {}, key: undefined, expectingKey: true })
        break
      case "[":
        open.push({ container: [], key: undefined, expectingKey: false })
        break
      case "}":
      case "]":
        place(open.pop()?.container ?? null)
        break
      case ",":
        if (top !== undefined) top.expectingKey = !Array.isArray(top.container)
        break
      case ":":
        if (top !== undefined) top.expectingKey = false
        break
      default: {
        const scalar: Json = nativeParse(token)
        if (top?.expectingKey === true && typeof scalar === "string") top.key = scalar
        else place(scalar)
      }
    }
  }
  return root
}

let probes = 0

/**
 * Whether this engine misreads keys (V8 12.8 and later until fixed: Node 24;
 * not Node 22, 26.12 or Chromium 156): an object of a shape never seen
 * before is parsed with the key `\\`, then with the key `\n` in its place.
 */
export const engineMisreadsKeys = (): boolean => {
  const fresh = `jsonKeyProbe${probes++}_${Date.now()}`
  nativeParse(`{"${fresh}":0,"\\\\":1}`)
  return Object.keys(nativeParse(`{"${fresh}":0,"\\n":1}`))[1] !== "\n"
}

/**
 * On an engine that misreads keys, `JSON.parse` itself becomes `parseJson`
 * (with a reviver, it stays the engine's own): what libraries parse in this
 * process reads keys as written too. The HTTP API parses request bodies, and
 * the typed client answers, with their own `JSON.parse`. Called first thing
 * by the server, the CLI and the test setup; a second call changes nothing.
 */
export const guardJsonParse = (): void => {
  if (JSON.parse !== nativeParse || !engineMisreadsKeys()) return
  JSON.parse = (text: string, reviver?: Parameters<typeof nativeParse>[1]) =>
    reviver === undefined ? parseJson(String(text)) : nativeParse(text, reviver)
}
