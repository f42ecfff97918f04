import { Result } from "effect"
import { quote, shorten } from "../messages/inputExcerpt"
import { parseJson } from "../json/parseJson"

/** Objects and arrays may nest this deep in a body; deeper is refused before parsing. */
export const maxJsonDepth = 64

/** How much of a client's input an error message may quote. */
const quoteLimit = 40

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** Why a string may not be stored (PostgreSQL refuses both in text and jsonb), or none. */
export const flawOf = (text: string): string | undefined =>
  text.includes("\u0000")
    ? "contains a NUL character (\\u0000)"
    : loneSurrogate.test(text)
      ? "contains a lone UTF-16 surrogate (an unpaired \\ud800-\\udfff escape)"
      : undefined

/**
 * The deepest nesting of objects and arrays in JSON `text`, counted without
 * recursion (so 10,000 levels cannot overflow the stack), or the offset at
 * which it first goes beyond `limit`. Brackets inside strings do not count.
 */
export const depthBeyond = (text: string, limit: number): number | undefined => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c)
        i++ // backslash: skip the escaped character
      else if (c === 0x22) inString = false
    } else if (c === 0x22) {
      inString = true
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return i
    } else if (c === 0x7d || c === 0x5d) {
      depth--
    }
  }
  return undefined
}

/** `body.values.name`, `body.writes[3]`: where in the body a value sits. */
const pathText = (path: ReadonlyArray<string | number>) =>
  path.reduce<string>(
    (text, key) => (typeof key === "number" ? `${text}[${key}]` : `${text}.${shorten(key, quoteLimit)}`),
    "body"
  )

/**
 * The first string (a value or a key) that cannot be stored, with its path.
 * Walks the parsed value with an explicit stack: no recursion.
 */
export const firstBadString = (value: unknown): string | undefined => {
  const stack: Array<{ readonly value: unknown; readonly path: ReadonlyArray<string | number> }> = [{ value, path: [] }]
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const current = item.value
    if (typeof current === "string") {
      const flaw = flawOf(current)
      if (flaw !== undefined) return `${pathText(item.path)} ${flaw}`
    } else if (Array.isArray(current)) {
      current.forEach((element, index) => {
        stack.push({ value: element, path: [...item.path, index] })
      })
    } else if (typeof current === "object" && current !== null) {
      for (const [key, element] of Object.entries(current)) {
        const flaw = flawOf(key)
        if (flaw !== undefined) return `the key ${quote(key)} in ${pathText(item.path)} ${flaw}`
        stack.push({ value: element, path: [...item.path, key] })
      }
    }
  }
  return undefined
}

const utf8 = new TextDecoder("utf-8", { fatal: true })

/**
 * A request body checked and parsed: valid UTF-8, JSON, no deeper than
 * `maxJsonDepth`, no string the database refuses. The message of a refusal
 * names the problem and where it is, and quotes no more than a few characters.
 */
export const parseJsonBody = (bytes: Uint8Array): Result.Result<unknown, string> => {
  if (bytes.length === 0) return Result.fail("the body is empty: send a JSON value")
  let text: string
  try {
    text = utf8.decode(bytes)
  } catch {
    return Result.fail("the body is not valid UTF-8")
  }
  const tooDeep = depthBeyond(text, maxJsonDepth)
  if (tooDeep !== undefined) {
    return Result.fail(`the body nests objects and arrays deeper than ${maxJsonDepth} levels (at character ${tooDeep})`)
  }
  let value: unknown
  try {
    value = parseJson(text)
  } catch (error) {
    return Result.fail(`the body is not valid JSON: ${syntaxErrorOf(error)}`)
  }
  const bad = firstBadString(value)
  return bad === undefined ? Result.succeed(value) : Result.fail(bad)
}

/**
 * V8's message without the input it quotes (`Unexpected token 'x', "..." is
 * not valid JSON`): the token and position are enough. Node 24's V8 adds
 * `(line 1 column 9)` after the position; it is dropped, so the message
 * stays what it has always been.
 */
const syntaxErrorOf = (error: unknown) => {
  const message = error instanceof Error ? error.message : String(error)
  return shorten(message.replace(/, ".*" is not valid JSON$/s, "").replace(/ \(line \d+ column \d+\)$/, ""), 120)
}
