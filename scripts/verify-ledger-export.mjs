#!/usr/bin/env node
// An auditor's check of a workspace's ledger from nothing but the admin feed export, the signed digests and the
// public key they trust (docs/ledger.md, "For an auditor"). It is an implementation of docs/ledger.md "Formats" of
// its own, on Node's modules only: it shares no code with the service, so a fault in one shows against the other.
//
//   node scripts/verify-ledger-export.mjs --export feed.ndjson --digest digests.ndjson --public-key ledger.pub.pem
//
// Exit 0: every line's content hash and link recomputed from the genesis match, and every digest is signed by the
// given key and matches the chain at its position. Exit 1: the first position where that fails, and why. Exit 2:
// the command line or an input file is unusable.
import { createHash, createPublicKey, verify } from "node:crypto"
import { createReadStream, readFileSync } from "node:fs"
import { createInterface } from "node:readline"
import { parseArgs } from "node:util"

const usage = `usage: node scripts/verify-ledger-export.mjs --export <feed.ndjson> --digest <digests file> --public-key <pem file>

  --export      the admin feed export of the whole workspace (admin feed export --workspace <slug> <file>, no filter, no cursor)
  --digest      the workspace's signed digests, one JSON object a line (docs/ledger.md, "Digests")
  --public-key  the Ed25519 public key you trust to have signed them (PEM)`

const digestFormat = "abs-ledger-digest/v1"

/**
 * `JSON.parse`, with keys read as written: Node 24's V8 can read an escaped key as a key with a backslash that an
 * earlier line had in the same place (nodejs/node#63785), which would make a sound export look tampered with. A key
 * read wrong holds a backslash, so a line whose keys hold none is taken as parsed; the rest is read again with each
 * key on its own.
 */
const readJson = (text) => {
  const value = JSON.parse(text)
  if (!text.includes("\\") || !hasBackslashKey(value)) return value
  const open = []
  let root = null
  const place = (member) => {
    const top = open.at(-1)
    if (top === undefined) root = member
    else if (Array.isArray(top.container)) top.container.push(member)
    else
      Object.defineProperty(top.container, top.key, {
        value: member,
        writable: true,
        enumerable: true,
        configurable: true
      })
  }
  for (const [token] of text.matchAll(/[{}[\],:]|"(?:[^"\\]|\\.)*"|[^\s{}[\],:"]+/g)) {
    const top = open.at(-1)
    if (token === "{" || token === "[")
      open.push({ container: token === "{" ? {} : [], key: "", keyNext: token === "{" })
    else if (token === "}" || token === "]") place(open.pop().container)
    else if (token === ",") top.keyNext = !Array.isArray(top.container)
    else if (token === ":") top.keyNext = false
    else if (top?.keyNext) top.key = JSON.parse(token)
    else place(JSON.parse(token))
  }
  return root
}

const hasBackslashKey = (value) =>
  value !== null &&
  typeof value === "object" &&
  (Array.isArray(value)
    ? value.some(hasBackslashKey)
    : Object.entries(value).some(([key, member]) => key.includes("\\") || hasBackslashKey(member)))

/** A verdict against the ledger: the first failing position and why. */
class Fault extends Error {
  constructor(position, why) {
    super(`position ${position}: ${why}`)
    this.position = position
  }
}

/** An input that cannot be read as what it should be: no verdict. */
class Unusable extends Error {}

// Formats (version 1) ------------------------------------------------------------------------------------------------

const Byte = { value: 0, object: 1, array: 2, salt: 3, content: 4, link: 5, genesis: 6 }

const sha256 = (...parts) => {
  const hash = createHash("sha256")
  for (const part of parts) hash.update(typeof part === "number" ? Buffer.of(part) : part)
  return hash.digest()
}

const uint32 = (n) => {
  const bytes = Buffer.alloc(4)
  bytes.writeUInt32BE(n)
  return bytes
}

const int64 = (n) => {
  const bytes = Buffer.alloc(8)
  bytes.writeBigInt64BE(n)
  return bytes
}

/** Keys sorted by UTF-16 code units, no whitespace, strings and numbers as JSON.stringify writes them. */
const canonicalJson = (value) => {
  if (value === null) return "null"
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`
  if (typeof value === "object") {
    const keys = Object.keys(value).sort()
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(",")}}`
  }
  return JSON.stringify(value)
}

const childSalt = (salt, key) => sha256(Byte.salt, salt, String(key))

/** RFC 6901: the place of a value, `/record/address/city`, `/changes/lineItems/added/0/values/qty`. */
const childPointer = (pointer, key) => `${pointer}/${String(key).replaceAll("~", "~0").replaceAll("/", "~1")}`

const isHash = (text) => typeof text === "string" && /^[0-9a-f]{64}$/.test(text)
const isHex = (text) => typeof text === "string" && /^(?:[0-9a-f]{2})+$/.test(text)

/** An erased value: the object `{"$erased": "<its commitment in hex>"}`, nothing else in it. */
const erasedCommitment = (value) =>
  value !== null && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length === 1
    ? value.$erased
    : undefined

class MissingSalt extends Error {}

/**
 * The salted Merkle commitment of a JSON value. A node's salt is the one published for its pointer, else derived
 * from its parent's; a single value commits to its salt and its canonical text, an object to its keys and members,
 * a list to its elements; an erased value stands for its commitment.
 */
const commit = (value, pointer, derived, published) => {
  const erased = erasedCommitment(value)
  if (erased !== undefined) {
    if (!isHash(erased)) throw new MissingSalt(`the erased value at ${pointer} is not a commitment`)
    return Buffer.from(erased, "hex")
  }
  const salt = published.get(pointer) ?? derived
  if (value === null || typeof value !== "object") {
    if (salt === undefined) throw new MissingSalt(`the value at ${pointer} has no salt to check it by`)
    return sha256(Byte.value, salt, canonicalJson(value))
  }
  const child = (key) => (salt === undefined ? undefined : childSalt(salt, key))
  if (Array.isArray(value)) {
    return sha256(
      Byte.array,
      ...value.map((element, i) => commit(element, childPointer(pointer, i), child(i), published))
    )
  }
  const parts = [Byte.object]
  for (const key of Object.keys(value).sort()) {
    parts.push(
      uint32(Buffer.byteLength(key)),
      key,
      commit(value[key], childPointer(pointer, key), child(key), published)
    )
  }
  return sha256(...parts)
}

const contentHash = (line) => {
  const salt = line.salt === null ? undefined : Buffer.from(line.salt, "hex")
  const published = new Map(
    Object.entries(line.erasedSalts ?? {}).map(([pointer, s]) => [pointer, Buffer.from(s, "hex")])
  )
  const part = (name) => {
    const value = line[name]
    if (value === undefined || value === null) return null
    return commit(value, `/${name}`, salt === undefined ? undefined : childSalt(salt, name), published).toString("hex")
  }
  const content = {
    v: 1,
    id: line.id,
    actor: line.actor,
    correlationId: line.correlationId,
    parentCorrelationId: line.parentCorrelationId,
    businessObject: line.businessObject,
    businessObjectId: line.businessObjectId,
    recordVersion: line.recordVersion,
    operation: line.operation,
    cause: line.cause,
    record: part("record"),
    changes: part("changes")
  }
  return sha256(Byte.content, canonicalJson(content))
}

const linkHash = (previous, position, atMicros, content) =>
  sha256(Byte.link, previous, int64(position), int64(atMicros), content)

const genesisHash = (schema) => sha256(Byte.genesis, "abs-ledger/v1", schema)

// The export ---------------------------------------------------------------------------------------------------------

const instant = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?Z$/

/** `at` as microseconds since 1970, exactly (a Date would keep milliseconds only). */
const microsOf = (at) => {
  const match = typeof at === "string" ? instant.exec(at) : null
  const millis = match === null ? Number.NaN : Date.parse(`${match[1]}Z`)
  if (match === null || Number.isNaN(millis)) return undefined
  return BigInt(millis) * 1000n + BigInt((match[2] ?? "").padEnd(6, "0"))
}

const isObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value)

/** What is wrong with a line's fields, or undefined. */
const malformed = (line) => {
  const strings = ["id", "correlationId", "businessObject", "businessObjectId", "operation"]
  for (const name of strings) if (typeof line[name] !== "string") return `its ${name} is not a string`
  if (!("actor" in line) || !("cause" in line)) return "it has no actor or no cause"
  if (line.parentCorrelationId !== null && typeof line.parentCorrelationId !== "string") {
    return "its parentCorrelationId is neither a string nor null"
  }
  if (line.recordVersion !== null && !Number.isSafeInteger(line.recordVersion)) {
    return "its recordVersion is neither an integer nor null"
  }
  if (line.salt !== null && !isHex(line.salt)) return "its salt is neither hex nor null"
  if (line.erasedSalts !== null && !(isObject(line.erasedSalts) && Object.values(line.erasedSalts).every(isHex))) {
    return "its erasedSalts is neither an object of hex salts nor null"
  }
  if (line.hash !== null && !isHash(line.hash)) return "its hash is neither 32 bytes of hex nor null"
  for (const name of ["record", "changes"]) {
    if (line[name] !== undefined && line[name] !== null && !isObject(line[name])) return `its ${name} is not an object`
  }
  return undefined
}

/**
 * One line as the chain takes it: its position, timestamp, stored hash, and its content hash recomputed now
 * (null, with why, when it cannot be); only `unreadable`, saying why, when its position or `at` cannot be read.
 */
const rowOf = (text, lineNumber) => {
  let line
  try {
    line = readJson(text)
  } catch {
    return { unreadable: `line ${lineNumber} is not JSON` }
  }
  if (isObject(line) && !("hash" in line)) {
    return { unreadable: `line ${lineNumber} has no ledger fields: an HTTP feed export? (use admin feed export)` }
  }
  if (!isObject(line) || typeof line.position !== "string" || !/^[1-9][0-9]*$/.test(line.position)) {
    return { unreadable: `line ${lineNumber} has no position` }
  }
  const position = BigInt(line.position)
  const atMicros = microsOf(line.at)
  if (atMicros === undefined) return { unreadable: `line ${lineNumber} (position ${position}) has no readable at` }
  const stored = line.hash === null || !isHash(line.hash) ? null : Buffer.from(line.hash, "hex")
  const wrong = malformed(line)
  if (wrong !== undefined) return { position, atMicros, stored, content: null, why: wrong }
  try {
    return { position, atMicros, stored, content: contentHash(line), why: undefined }
  } catch (error) {
    if (!(error instanceof MissingSalt)) throw error
    return { position, atMicros, stored, content: null, why: error.message }
  }
}

// Digests ------------------------------------------------------------------------------------------------------------

/** Whether `signature` (base64) is the key's Ed25519 signature of the digest's canonical JSON without it. */
const signedBy = (key, signed, signature) => {
  try {
    return verify(null, Buffer.from(canonicalJson(signed), "utf8"), key, Buffer.from(signature, "base64"))
  } catch {
    return false
  }
}

const readDigests = (path, trustedKey) => {
  const trustedDer = trustedKey.export({ type: "spki", format: "der" })
  const digests = []
  const lines = readFileSync(path, "utf8").split("\n")
  lines.forEach((text, index) => {
    if (text.trim() === "") return
    let digest
    try {
      digest = readJson(text)
    } catch {
      throw new Unusable(`${path}, line ${index + 1}: not JSON`)
    }
    const where = `the digest on line ${index + 1} of ${path}`
    if (!isObject(digest) || digest.format !== digestFormat)
      throw new Unusable(`${where}: not a ${digestFormat} digest`)
    const { signature, ...signed } = digest
    for (const name of ["workspace", "schema", "position", "hash", "at", "publicKey", "signature"]) {
      if (typeof digest[name] !== "string") throw new Unusable(`${where}: no ${name}`)
    }
    if (!/^(0|[1-9][0-9]*)$/.test(digest.position) || !isHash(digest.hash)) {
      throw new Unusable(`${where}: its position or hash is malformed`)
    }
    const label = `${where} (position ${digest.position}, taken ${digest.at})`
    const refused = !Buffer.from(digest.publicKey, "base64").equals(trustedDer)
      ? "it names another key than the one given"
      : signedBy(trustedKey, signed, signature)
        ? undefined
        : "its signature does not verify with the key given"
    digests.push({ ...digest, label, position: BigInt(digest.position), refused })
  })
  if (digests.length === 0) throw new Unusable(`${path}: no digest in it`)
  const schemas = new Set(digests.map((digest) => digest.schema))
  if (schemas.size > 1) throw new Unusable(`${path}: digests of more than one workspace (${[...schemas].join(", ")})`)
  return digests.sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0))
}

// The chain ----------------------------------------------------------------------------------------------------------

const same = (a, b) => a !== null && b !== null && a.equals(b)

/** Whether `row` chains from `previous` at `position` as its stored hash says. */
const chainsFrom = (row, previous, position) =>
  row !== null &&
  row.content !== null &&
  previous !== null &&
  same(linkHash(previous, position, row.atMicros, row.content), row.stored)

/**
 * Why `row`, which does not chain from the last good link, fails, told by the line after it (`next`, or null at the
 * end): the fault names the first position in feed order that is not as the ledger wrote it.
 */
const classify = (row, next, previous, lastPosition) => {
  const p = row.position
  const expected = lastPosition + 1n
  if (row.position > expected) {
    if (next !== null && next.position !== undefined && next.position < p) {
      if (next.position === expected && chainsFrom(next, previous, expected) && chainsFrom(row, next.stored, p)) {
        return new Fault(expected, `the lines of positions ${expected} and ${p} are swapped`)
      }
      return new Fault(expected, `lines out of order: position ${p} comes before position ${next.position}`)
    }
    const range = p - expected > 1n ? `positions ${expected}-${p - 1n}` : `position ${expected}`
    return new Fault(
      expected,
      `missing: no line for ${range}, and position ${p} does not chain from the line before it (lines removed, or position ${p} changed)`
    )
  }
  if (row.content === null) return new Fault(p, `changed: ${row.why}`)
  if (row.stored === null) return new Fault(p, "a row the service never chained (no hash)")
  if (next !== null && next.position === p + 1n && chainsFrom(next, row.stored, p + 1n)) {
    return new Fault(p, "changed: its content, at or position no longer match its hash")
  }
  const recomputed = linkHash(previous, p, row.atMicros, row.content)
  if (next !== null && next.position !== undefined && chainsFrom(next, recomputed, next.position)) {
    return new Fault(p, "changed: its hash is not the chain's link there (the hash field was altered)")
  }
  return new Fault(p, "does not chain from the line before it (its content, at, position or hash changed)")
}

const verifyExport = async (exportPath, digests) => {
  const schema = digests[0].schema
  let previous = genesisHash(schema)
  let lastPosition = 0n
  let rows = 0
  let absent = 0n
  let lastGoodDigest = null
  let pendingDigest = 0

  /** The digests up to `position` (the link there is `link`) checked; the first that fails is the verdict. */
  const checkDigests = (position, link) => {
    for (; pendingDigest < digests.length; pendingDigest++) {
      const digest = digests[pendingDigest]
      if (digest.position > position) return
      if (digest.refused !== undefined) throw new Fault(digest.position, `${digest.label}: ${digest.refused}`)
      if (digest.position < position) {
        throw new Fault(digest.position, `${digest.label} names a position with no line in the export`)
      }
      if (!digest.hash || !same(Buffer.from(digest.hash, "hex"), link)) {
        const from = lastGoodDigest === null ? 1n : lastGoodDigest.position + 1n
        throw new Fault(
          from,
          `rewritten: the chain at position ${position} does not match ${digest.label}; the lines between positions ${from} and ${position} were rewritten after it was signed`
        )
      }
      lastGoodDigest = digest
    }
  }

  checkDigests(0n, previous)
  const lines = createInterface({ input: createReadStream(exportPath), crlfDelay: Number.POSITIVE_INFINITY })
  const iterator = lines[Symbol.asyncIterator]()
  let lineNumber = 0
  const nextRow = async () => {
    for (;;) {
      const { done, value } = await iterator.next()
      if (done) return null
      lineNumber++
      if (value.trim() !== "") return rowOf(value, lineNumber)
    }
  }
  try {
    for (let row = await nextRow(); row !== null; row = await nextRow()) {
      if (row.unreadable !== undefined) throw new Fault(lastPosition + 1n, row.unreadable)
      if (row.position === lastPosition) throw new Fault(row.position, `a second line at position ${row.position}`)
      if (row.position < lastPosition) {
        throw new Fault(
          row.position,
          `lines out of order: position ${row.position} comes after position ${lastPosition}`
        )
      }
      const link = row.content === null ? null : linkHash(previous, row.position, row.atMicros, row.content)
      if (link === null || !same(link, row.stored)) {
        const next = await nextRow()
        throw classify(row, next?.unreadable === undefined ? next : null, previous, lastPosition)
      }
      absent += row.position - lastPosition - 1n
      previous = link
      lastPosition = row.position
      rows++
      checkDigests(row.position, link)
    }
  } finally {
    lines.close()
  }
  const beyond = digests[pendingDigest]
  if (beyond !== undefined) {
    if (beyond.refused !== undefined) throw new Fault(beyond.position, `${beyond.label}: ${beyond.refused}`)
    throw new Fault(
      lastPosition + 1n,
      `missing: ${beyond.label} was signed at position ${beyond.position}, the export ends at ${lastPosition} (lines removed from its end)`
    )
  }
  return { rows, head: { position: lastPosition, hash: previous.toString("hex") }, absent, lastGoodDigest }
}

// The command line ---------------------------------------------------------------------------------------------------

const main = async () => {
  let options
  try {
    ;({ values: options } = parseArgs({
      options: { export: { type: "string" }, digest: { type: "string" }, "public-key": { type: "string" } }
    }))
  } catch (error) {
    throw new Unusable(`${error.message}\n${usage}`)
  }
  if (options.export === undefined || options.digest === undefined || options["public-key"] === undefined) {
    throw new Unusable(usage)
  }
  let trustedKey
  try {
    trustedKey = createPublicKey(readFileSync(options["public-key"], "utf8"))
  } catch (error) {
    throw new Unusable(`${options["public-key"]}: not a public key in PEM (${error.message})`)
  }
  if (trustedKey.asymmetricKeyType !== "ed25519") throw new Unusable(`${options["public-key"]}: not an Ed25519 key`)
  const digests = readDigests(options.digest, trustedKey)
  const verdict = await verifyExport(options.export, digests)
  const latest = verdict.lastGoodDigest
  const signed = digests.length === 1 ? "1 digest" : `${digests.length} digests`
  process.stdout.write(
    `OK ${digests[0].workspace} (${digests[0].schema}): ${verdict.rows} rows, head position ${verdict.head.position} hash ${verdict.head.hash}\n` +
      `${signed} signed by the key given match the chain, the latest at position ${latest?.position ?? 0}` +
      (latest !== null && latest.position < verdict.head.position
        ? `; the rows after it are covered by no digest yet\n`
        : "\n") +
      (verdict.absent > 0n
        ? `${verdict.absent} positions have no row (gaps older than the ledger, chained as found)\n`
        : "")
  )
}

main().then(
  () => process.exit(0),
  (error) => {
    if (error instanceof Fault) {
      process.stdout.write(`FAILED at ${error.message}\n`)
      process.exit(1)
    }
    process.stderr.write(`${error instanceof Unusable ? error.message : error.stack}\n`)
    process.exit(2)
  }
)
