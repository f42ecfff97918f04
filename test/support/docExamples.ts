/**
 * The shell examples of a Markdown document and the answers they document:
 * each `curl -i` call is followed by a comment `# HTTP/1.1 <status> ...`
 * naming its status and, where shown, its `etag: "N"`, `idempotency-replayed:
 * true` and body fragments (`"key":value` with a scalar value, `…` marking
 * what is left out), on that line and the comment lines right under it.
 */

/** The fenced `sh` blocks, in order. */
export const shellBlocks = (markdown: string): ReadonlyArray<string> =>
  [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => match[1] ?? "")

export interface DocumentedAnswer {
  /** The comment it was read from, to name it in a failure. */
  readonly comment: string
  readonly status: number
  readonly etag: string | undefined
  readonly replayed: boolean
  /** `"key":value` texts the answer's body must contain. */
  readonly fragments: ReadonlyArray<string>
}

const fragmentPattern = /"(\w+)":("[^"…]*"|-?\d+(?:\.\d+)?|null|true|false)/g

export const documentedAnswers = (script: string): ReadonlyArray<DocumentedAnswer> => {
  const lines = script.split("\n")
  const answers: Array<DocumentedAnswer> = []
  lines.forEach((line, index) => {
    const status = /^# HTTP\/1\.1 (\d{3})/.exec(line)
    if (status === null) return
    const comment = [line]
    for (const next of lines.slice(index + 1)) {
      if (!next.startsWith("#") || /^# HTTP\/1\.1 /.test(next)) break
      comment.push(next)
    }
    const text = comment.join("\n")
    answers.push({
      comment: line,
      status: Number(status[1]),
      etag: /etag: ("\d+")/.exec(text)?.[1],
      replayed: /idempotency-replayed: true/.test(text),
      fragments: [...text.matchAll(fragmentPattern)].map((match) => `"${match[1]}":${match[2]}`)
    })
  })
  return answers
}

export interface ReceivedAnswer {
  readonly status: number
  readonly headers: ReadonlyMap<string, string>
  readonly body: string
}

/** The answers `curl -i` printed one after the other (a body has no newline before the next status line). */
export const receivedAnswers = (output: string): ReadonlyArray<ReceivedAnswer> => {
  const heads = [...output.matchAll(/HTTP\/1\.1 (\d{3})[^\r\n]*\r\n([\s\S]*?)\r\n\r\n/g)]
  return heads.map((head, i) => {
    const bodyStart = (head.index ?? 0) + head[0].length
    const next = heads[i + 1]
    const headers = new Map(
      (head[2] ?? "").split("\r\n").flatMap((header) => {
        const colon = header.indexOf(":")
        return colon < 0 ? [] : [[header.slice(0, colon).toLowerCase(), header.slice(colon + 1).trim()] as const]
      })
    )
    return {
      status: Number(head[1]),
      headers,
      body: output.slice(bodyStart, next === undefined ? output.length : next.index)
    }
  })
}
