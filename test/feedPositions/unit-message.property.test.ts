import { createHash } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { Option, Schema } from "effect"
import type { SlotEvent } from "../../src/feedPositions/commits"
import { makeCommitAssembler } from "../../src/feedPositions/commits"
import { lsnOf, lsnText } from "../../src/feedPositions/lsn"
import { decodeUnitMessage, encodeUnitMessage, unitMessagePrefix } from "../../src/feedPositions/unitMessage"

const between = (minimum: number, maximum: number) => Schema.Int.check(Schema.isBetween({ minimum, maximum }))
const uuidOf = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`
const hashOf = (n: number) => createHash("sha256").update(String(n)).digest("hex")
const text = (s: string) => new Uint8Array(Buffer.from(s, "latin1"))

/** A unit as drawn: its workspace, correlation and row hashes by small numbers. */
const Unit = Schema.Struct({ workspace: between(0, 3), unit: between(0, 5), rows: Schema.Array(between(0, 1000)) })
const Transaction = Schema.Struct({
  units: Schema.Array(Unit),
  foreign: Schema.Boolean,
  keepaliveAfter: Schema.Boolean
})

const messageOf = (unit: typeof Unit.Type) => ({
  workspaceId: uuidOf(unit.workspace),
  schema: `ws_t${unit.workspace}`,
  correlationId: uuidOf(100 + unit.unit)
})

describe("a unit's logical message", () => {
  it.prop(
    "decode(encode(m)) = m for every unit of 1 row or more",
    [between(0, 1_000_000), between(0, 1_000_000), Schema.NonEmptyArray(between(0, 1_000_000))],
    ([workspace, unit, rows]) => {
      const message = {
        workspaceId: uuidOf(workspace),
        schema: `ws_w${workspace}`,
        correlationId: uuidOf(unit)
      }
      const contents = rows.map(hashOf)
      const decoded = decodeUnitMessage(text(encodeUnitMessage(message, contents.join(""))))
      expect(decoded).toEqual(Option.some({ ...message, contents }))
    }
  )

  it.prop("anything else decodes to none, never throws", [Schema.String.check(Schema.isMaxLength(300))], ([s]) => {
    const decoded = decodeUnitMessage(text(s))
    return Option.isNone(decoded) || encodeUnitMessage(decoded.value, decoded.value.contents.join("")) === s
  })

  it("refuses a message of another version, a hash cut short, a schema that is not a workspace's", () => {
    const good = encodeUnitMessage({ workspaceId: uuidOf(1), schema: "ws_acme", correlationId: uuidOf(2) }, hashOf(1))
    expect(Option.isSome(decodeUnitMessage(text(good)))).toBe(true)
    for (const bad of [
      good.replace(/^1 /, "2 "),
      good.slice(0, -1),
      good.replace("ws_acme", "public"),
      good.replace(uuidOf(2), "not-a-uuid"),
      `${good} extra`,
      good.replace(hashOf(1), "")
    ]) {
      expect(decodeUnitMessage(text(bad)), bad).toEqual(Option.none())
    }
  })

  it.prop(
    "an LSN's text and number map onto each other",
    [between(0, 0x7fffffff), between(0, 0x7fffffff)],
    ([h, l]) => {
      const lsn = (BigInt(h) << 32n) | BigInt(l)
      return lsnOf(lsnText(lsn)) === lsn
    }
  )
})

describe("the slot's events as whole transactions", () => {
  it.prop(
    "each transaction that wrote units is one commit, in order, a unit's flushes joined; the rest only passes",
    [Schema.Array(Transaction).check(Schema.isMaxLength(20))],
    ([transactions]) => {
      const assemble = makeCommitAssembler()
      const events: Array<SlotEvent> = []
      let lsn = 100n
      const expected: Array<{ endLsn: bigint; units: Array<{ correlationId: string; contents: Array<string> }> }> = []
      for (const transaction of transactions) {
        events.push({ tag: "begin" })
        const units = new Map<
          string,
          { workspaceId: string; schema: string; correlationId: string; contents: Array<string> }
        >()
        for (const unit of transaction.units) {
          if (unit.rows.length === 0) continue
          const message = messageOf(unit)
          // One unit is one correlation id: the same id drawn in another workspace would be another unit's.
          const known = units.get(message.correlationId)
          if (known !== undefined && known.workspaceId !== message.workspaceId) continue
          const contents = unit.rows.map(hashOf)
          events.push({
            tag: "message",
            prefix: unitMessagePrefix,
            transactional: true,
            content: text(encodeUnitMessage(message, contents.join("")))
          })
          if (known === undefined) units.set(message.correlationId, { ...message, contents: [...contents] })
          else known.contents.push(...contents)
        }
        if (transaction.foreign) {
          events.push({ tag: "message", prefix: "someone.else", transactional: true, content: text("x") })
          events.push({ tag: "message", prefix: unitMessagePrefix, transactional: false, content: text("y") })
        }
        lsn += 10n
        events.push({ tag: "commit", endLsn: lsn, commitMicros: lsn })
        if (units.size > 0) expected.push({ endLsn: lsn, units: [...units.values()] })
        if (transaction.keepaliveAfter) events.push({ tag: "keepalive", lsn: lsn + 1n })
      }
      const commits = []
      let passed = 0n
      for (const event of events) {
        const out = assemble(event)
        if (Option.isNone(out)) continue
        if (out.value.tag === "commit") {
          commits.push(out.value.commit)
          passed = out.value.commit.endLsn
        } else if (out.value.tag === "passed") {
          expect(out.value.lsn >= passed).toBe(true)
          passed = out.value.lsn
        } else throw new Error(out.value.reason)
      }
      expect(commits.map((c) => ({ endLsn: c.endLsn, units: c.units }))).toEqual(expected)
      if (transactions.length > 0) expect(passed).toBeGreaterThanOrEqual(lsn)
    }
  )

  it("a keepalive inside a transaction passes nothing; a message of the prefix that is not a unit's is reported", () => {
    const assemble = makeCommitAssembler()
    expect(assemble({ tag: "begin" })).toEqual(Option.none())
    expect(assemble({ tag: "keepalive", lsn: 5n })).toEqual(Option.none())
    expect(
      Option.map(
        assemble({ tag: "message", prefix: unitMessagePrefix, transactional: true, content: text("garbage") }),
        (a) => a.tag
      )
    ).toEqual(Option.some("skipped"))
    expect(assemble({ tag: "commit", endLsn: 9n, commitMicros: 1n })).toEqual(Option.some({ tag: "passed", lsn: 9n }))
    expect(assemble({ tag: "keepalive", lsn: 12n })).toEqual(Option.some({ tag: "passed", lsn: 12n }))
  })
})
