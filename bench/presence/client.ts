/**
 * One load-generator process of `npm run bench:presence`, driven by main.ts
 * over the fork IPC channel. Each `Run` opens `connections` keep-alive TCP
 * connections to the target, each sending the next heartbeat as soon as the
 * previous one is answered. The requests are written by hand and the answers
 * parsed by scanning for the head's end and `content-length`: `node:http`'s
 * client would spend more CPU per heartbeat than the bare floor server does,
 * on the same two cores.
 */
import { connect } from "node:net"
import type { Socket } from "node:net"
import { Schema } from "effect"
import { now, Samples } from "../broadcast/stats"
import { ClientCommand } from "./protocol"
import type { ClientReply, RunResult } from "./protocol"

const send = (reply: ClientReply) => process.send?.(reply)

/** One connection: requests from `paths` in turn, starting at `offset`. */
const drive = (
  port: number,
  requests: ReadonlyArray<string>,
  offset: number,
  stride: number,
  windowStart: number,
  windowEnd: number,
  samples: Samples
) =>
  new Promise<{ completed: number; failed: number; firstError?: string }>((resolve) => {
    const socket: Socket = connect({ host: "127.0.0.1", port, noDelay: true })
    socket.setEncoding("latin1")
    let next = offset
    let sentAt = 0
    let buffer = ""
    let completed = 0
    let failed = 0
    let firstError: string | undefined
    let done = false
    const finish = () => {
      if (done) return
      done = true
      socket.destroy()
      resolve({ completed, failed, firstError })
    }
    const fire = () => {
      if (now() >= windowEnd) return finish()
      sentAt = now()
      socket.write(requests[next % requests.length] ?? "")
      next += stride
    }
    socket.on("connect", fire)
    socket.on("data", (text: string) => {
      buffer += text
      for (;;) {
        const headEnd = buffer.indexOf("\r\n\r\n")
        if (headEnd < 0) return
        const head = buffer.slice(0, headEnd)
        const length = /\r\ncontent-length:\s*(\d+)/i.exec(head)
        const bodyLength = length?.[1] === undefined ? 0 : Number(length[1])
        if (buffer.length < headEnd + 4 + bodyLength) return
        const status = Number(head.slice(9, 12))
        const body = buffer.slice(headEnd + 4, headEnd + 4 + bodyLength)
        buffer = buffer.slice(headEnd + 4 + bodyLength)
        const at = now()
        if (status !== 204) {
          failed++
          firstError ??= `${status} ${body.slice(0, 200)}`
        } else if (sentAt >= windowStart && at <= windowEnd) {
          completed++
          samples.push(at - sentAt)
        }
        if (/\r\nconnection:\s*close/i.test(head)) {
          failed++
          firstError ??= "the server closed the connection"
          return finish()
        }
        fire()
      }
    })
    socket.on("error", (error) => {
      failed++
      firstError ??= error.message
      finish()
    })
    socket.on("close", finish)
  })

const run = async (command: Extract<typeof ClientCommand.Type, { _tag: "Run" }>): Promise<RunResult> => {
  const requests = command.paths.map(
    (path) =>
      `PUT ${path.path} HTTP/1.1\r\nhost: 127.0.0.1:${command.port}\r\norigin: http://127.0.0.1:${command.port}\r\ncookie: ${path.cookie}\r\ncontent-length: 0\r\n\r\n`
  )
  const samples = new Samples(1 << 16)
  const start = now()
  const windowStart = start + command.warmupMs
  const windowEnd = windowStart + command.measureMs
  const cpuTimer = setTimeout(() => {
    cpuAtWindow = process.cpuUsage()
  }, command.warmupMs)
  let cpuAtWindow = process.cpuUsage()
  const outcomes = await Promise.all(
    Array.from({ length: command.connections }, (_, i) =>
      drive(command.port, requests, command.offset + i, command.stride, windowStart, windowEnd, samples)
    )
  )
  clearTimeout(cpuTimer)
  const cpu = process.cpuUsage(cpuAtWindow)
  return {
    completed: outcomes.reduce((n, o) => n + o.completed, 0),
    failed: outcomes.reduce((n, o) => n + o.failed, 0),
    firstError: outcomes.find((o) => o.firstError !== undefined)?.firstError,
    latencyMs: samples.raw(),
    cpuMs: (cpu.user + cpu.system) / 1000,
    windowMs: command.measureMs
  }
}

process.on("message", (raw: unknown) => {
  const decoded = Schema.decodeUnknownResult(ClientCommand)(raw)
  if (decoded._tag === "Failure") return send({ _tag: "Failed", message: `undecodable command ${JSON.stringify(raw)}` })
  const command = decoded.success
  if (command._tag === "Exit") return process.exit(0)
  run(command).then(
    (result) => send({ _tag: "Done", result }),
    (error: unknown) => send({ _tag: "Failed", message: String(error) })
  )
})
process.on("disconnect", () => process.exit(0))
send({ _tag: "Ready" })
