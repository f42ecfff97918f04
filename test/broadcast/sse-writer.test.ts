import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { BroadcastEnvelope } from "../../src/broadcast/Broadcast"
import * as BroadcastHub from "../../src/broadcast/BroadcastHub"
import type { Hint } from "../../src/broadcast/Hint"
import { makeHint } from "../../src/broadcast/Hint"
import { makeReadFilters } from "../../src/auth/readFilters"
import type { SseSocket } from "../../src/broadcast/SseWriter"
import { SseWriter } from "../../src/broadcast/SseWriter"

/** A socket that accepts writes until told to refuse them, as a client that stops reading makes it. */
class FakeSocket implements SseSocket {
  readonly written: Array<string> = []
  accepting = true
  destroyed = false
  private onDrain: Array<() => void> = []

  write(chunk: Uint8Array): boolean {
    this.written.push(Buffer.from(chunk).toString())
    return this.accepting
  }

  once(_event: "drain", listener: () => void): this {
    this.onDrain.push(listener)
    return this
  }

  ended = false

  end(callback: () => void): void {
    this.ended = true
    callback()
  }

  destroy(): void {
    this.destroyed = true
  }

  /** The client read everything: the socket takes writes again. */
  drain(): void {
    this.accepting = true
    const listeners = this.onDrain
    this.onDrain = []
    for (const listener of listeners) listener()
  }
}

const head = Buffer.from(": connected\n\n")
const hint = (id: string, businessObject = "crm/deal"): Hint =>
  makeHint("changed", { businessObject, businessObjectId: id })
const event = (id: string, businessObject = "crm/deal") =>
  `event: changed\ndata: ${JSON.stringify({ businessObject, businessObjectId: id })}\n\n`
const ids = (written: ReadonlyArray<string>) =>
  written.flatMap((text) => [...text.matchAll(/"businessObjectId":"([^"]*)"/g)].map((match) => match[1]))

describe("SseWriter", () => {
  it("encodes a hint as the SSE event, once for every stream", () => {
    const one = hint("r1")
    expect(Buffer.from(one.event).toString()).toBe(event("r1"))
    const socket = new FakeSocket()
    const writers = [new SseWriter(socket, 4), new SseWriter(socket, 4)]
    for (const writer of writers) writer.start(head)
    for (const writer of writers) writer.offer(one)
    expect(socket.written.slice(-2)).toEqual([event("r1"), event("r1")])
  })

  it("holds hints offered before the stream starts and writes them after its head, in order", () => {
    const socket = new FakeSocket()
    const writer = new SseWriter(socket, 8)
    writer.offer(hint("early-1"))
    writer.offer(hint("early-2"))
    expect(socket.written).toEqual([])
    writer.start(head)
    writer.offer(hint("late"))
    expect(socket.written).toEqual([": connected\n\n", event("early-1"), event("early-2"), event("late")])
  })

  it("a stalled socket: the publisher never waits, the buffer keeps the newest hints, and they go out in order once it drains", () => {
    const socket = new FakeSocket()
    const writer = new SseWriter(socket, 4)
    writer.start(head)
    socket.accepting = false
    // This write is refused: the socket took it, but wants no more for now.
    writer.offer(hint("r0"))
    for (let i = 1; i <= 10; i++) writer.offer(hint(`r${i}`))
    expect(ids(socket.written)).toEqual(["r0"])
    expect(writer.waiting).toBe(4)
    expect(writer.dropped).toBe(6)
    socket.drain()
    expect(ids(socket.written)).toEqual(["r0", "r7", "r8", "r9", "r10"])
    expect(writer.waiting).toBe(0)
    // Flowing again: straight through.
    writer.offer(hint("r11"))
    expect(ids(socket.written).at(-1)).toBe("r11")
  })

  it("a full buffer coalesces: a hint already waiting is not queued again, and costs no other hint its place", () => {
    const socket = new FakeSocket()
    const writer = new SseWriter(socket, 3)
    writer.start(head)
    socket.accepting = false
    writer.offer(hint("first"))
    writer.offer(hint("a"))
    writer.offer(hint("b"))
    writer.offer(hint("a"))
    writer.offer(hint("a", "crm/company"))
    writer.offer(hint("b"))
    expect(writer.waiting).toBe(3)
    expect(writer.dropped).toBe(0)
    socket.drain()
    expect(socket.written.slice(2)).toEqual([event("a"), event("b"), event("a", "crm/company")])
  })

  it("a socket that refuses again while draining keeps the rest for the next drain", () => {
    const socket = new FakeSocket()
    const writer = new SseWriter(socket, 8)
    writer.start(head)
    socket.accepting = false
    for (const id of ["r1", "r2", "r3", "r4"]) writer.offer(hint(id))
    socket.accepting = true
    const write = socket.write.bind(socket)
    let writes = 0
    socket.write = (chunk) => {
      write(chunk)
      return ++writes < 2
    }
    socket.drain()
    expect(ids(socket.written)).toEqual(["r1", "r2", "r3"])
    socket.write = write
    socket.drain()
    expect(ids(socket.written)).toEqual(["r1", "r2", "r3", "r4"])
  })

  it("keep-alive comments go to idle streams only, and nothing is written once closed", () => {
    const socket = new FakeSocket()
    const writer = new SseWriter(socket, 4)
    const comment = Buffer.from(": keep-alive\n\n")
    writer.keepAlive(comment)
    expect(socket.written).toEqual([])
    writer.start(head)
    writer.keepAlive(comment)
    expect(socket.written.at(-1)).toBe(": keep-alive\n\n")
    socket.accepting = false
    writer.offer(hint("r1"))
    const before = socket.written.length
    writer.keepAlive(comment)
    expect(socket.written.length).toBe(before)
    writer.close()
    socket.drain()
    writer.offer(hint("r2"))
    writer.keepAlive(comment)
    expect(socket.written.length).toBe(before)
  })

  it("end (shutdown): the waiting hints are dropped, the last event goes out, the connection closes; nothing after it", () => {
    const socket = new FakeSocket()
    const writer = new SseWriter(socket, 4)
    writer.start(head)
    socket.accepting = false
    writer.offer(hint("r1"))
    writer.offer(hint("r2"))
    expect(writer.waiting).toBe(1)
    writer.end(Buffer.from("event: shutdown\ndata: {}\n\n"))
    expect(socket.written.slice(1)).toEqual([event("r1"), "event: shutdown\ndata: {}\n\n"])
    expect([socket.ended, socket.destroyed, writer.waiting]).toEqual([true, true, 0])
    socket.drain()
    writer.offer(hint("r3"))
    writer.end(Buffer.from("again"))
    expect(socket.written).toHaveLength(3)
  })

  it("end before the stream started: the connection is dropped, nothing is written", () => {
    const socket = new FakeSocket()
    const writer = new SseWriter(socket, 4)
    writer.end(Buffer.from("event: shutdown\ndata: {}\n\n"))
    writer.start(head)
    expect([socket.written, socket.ended, socket.destroyed]).toEqual([[], false, true])
  })
})

const envelope = (workspace: string, businessObject: string, businessObjectId: string) =>
  new BroadcastEnvelope({ workspace, type: "changed", data: { businessObject, businessObjectId } })

describe("BroadcastHub sinks", () => {
  it.effect("streams with equal grants share one filter, asked once per hint; detaching twice is harmless", () =>
    Effect.gen(function* () {
      const hub = yield* BroadcastHub.make()
      const readFilter = makeReadFilters()
      const dealsOnly = [{ businessObject: "crm/deal", permission: "read" as const }]
      // Same grants in another order and object: the same filter.
      const filter = readFilter(dealsOnly)
      expect(readFilter([{ businessObject: "crm/deal", permission: "read" }])).toBe(filter)
      expect(readFilter([{ businessObject: "*", permission: "read" }])).not.toBe(filter)

      let asked = 0
      const counting = (businessObject: string) => {
        asked++
        return filter(businessObject)
      }
      const received: Array<Array<string>> = [[], [], []]
      const detach = yield* Effect.forEach(received, (into) =>
        hub.attach("ws", { offer: (hint) => into.push(hint.data.businessObjectId) }, counting)
      )
      yield* hub.deliver(envelope("ws", "crm/deal", "d1"))
      yield* hub.deliver(envelope("ws", "crm/company", "c1"))
      yield* hub.deliver(envelope("elsewhere", "crm/deal", "x1"))
      expect(received).toEqual([["d1"], ["d1"], ["d1"]])
      expect(asked).toBe(2)

      expect(yield* hub.subscriberCount).toBe(3)
      detach[0]?.()
      detach[0]?.()
      expect(yield* hub.subscriberCount).toBe(2)
      for (const done of detach) done()
      expect([yield* hub.subscriberCount, yield* hub.workspaceCount]).toEqual([0, 0])
    })
  )

  it.effect(
    "a hint is encoded once for its workspace: every stream that may read it gets the same bytes, the others nothing",
    () =>
      Effect.gen(function* () {
        const hub = yield* BroadcastHub.make()
        const readFilter = makeReadFilters()
        const dealsOnly = readFilter([{ businessObject: "crm/deal", permission: "read" }])
        const everything = readFilter([{ businessObject: "*", permission: "read" }])
        const nothing = readFilter([{ businessObject: "crm/activity", permission: "update" }])
        const got = new Map<string, Array<Hint>>()
        const sink = (name: string) => {
          got.set(name, [])
          return { offer: (hint: Hint) => got.get(name)?.push(hint) }
        }
        for (const [name, filter] of [
          ["deals 1", dealsOnly],
          ["deals 2", dealsOnly],
          ["all 1", everything],
          ["all 2", everything],
          ["none", nothing]
        ] as const) {
          yield* hub.attach("ws", sink(name), filter)
        }
        yield* hub.deliver(envelope("ws", "crm/deal", "d1"))
        yield* hub.deliver(envelope("ws", "crm/company", "c1"))

        const ids = (name: string) => got.get(name)?.map((h) => h.data.businessObjectId)
        expect([ids("deals 1"), ids("deals 2"), ids("all 1"), ids("all 2"), ids("none")]).toEqual([
          ["d1"],
          ["d1"],
          ["d1", "c1"],
          ["d1", "c1"],
          []
        ])
        // One encoding per hint, shared by every stream it reaches (not one per stream).
        const dealEvents = new Set(["deals 1", "deals 2", "all 1", "all 2"].map((name) => got.get(name)?.[0]?.event))
        expect(dealEvents.size).toBe(1)
        expect(Buffer.from([...dealEvents][0] ?? []).toString()).toBe(
          'event: changed\ndata: {"businessObject":"crm/deal","businessObjectId":"d1"}\n\n'
        )
      })
  )
})
