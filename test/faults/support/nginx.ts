import { Deferred, Effect } from "effect"
import type { Scope } from "effect"
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort } from "../../support/freePort"
import { spawnLong, waitUntil } from "./processes"
import type { Spawned } from "./processes"
import { probe } from "./service"

/** The shipped proxy configuration (docs/scale-out.md, "N instances behind a proxy"). */
export const shippedConfig = "deploy/nginx.conf"

/** Where Debian's nginx-light puts the binary (`.ci/run` installs it). */
export const nginxBinary = ["/usr/sbin/nginx", "/usr/bin/nginx"].find((path) => existsSync(path))

/**
 * The shipped site with this test's addresses put in: its upstream's
 * `server` lines become one per port, its `listen` line the given port on
 * loopback. Everything else is used as shipped; a file whose shape changed
 * fails here rather than running with the example addresses.
 */
export const renderSite = (site: string, listenPort: number, upstreamPorts: ReadonlyArray<number>): string => {
  const serverLine = /^(\s*)server\s+[^\s;]+(\s[^;]*)?;\s*$/
  const lines = site.split("\n")
  const servers = lines.flatMap((line, i) => (serverLine.test(line) ? [i] : []))
  const listens = lines.flatMap((line, i) => (/^\s*listen\s[^;]*;\s*$/.test(line) ? [i] : []))
  if (servers.length === 0 || listens.length !== 1) {
    throw new Error(`${shippedConfig}: expected upstream server lines and one listen line`)
  }
  const first = servers[0] ?? 0
  const indent = lines[first]?.match(serverLine)?.[1] ?? "    "
  const options = lines[first]?.match(serverLine)?.[2] ?? ""
  const rendered = lines.flatMap((line, i) => {
    if (i === first) return upstreamPorts.map((port) => `${indent}server 127.0.0.1:${port}${options};`)
    if (servers.includes(i)) return []
    if (listens.includes(i)) return [line.replace(/listen\s[^;]*;/, `listen 127.0.0.1:${listenPort};`)]
    return [line]
  })
  return rendered.join("\n")
}

/** nginx's own settings for a test run: every path in `dir`, one worker (so round robin is one rotation), in the foreground. */
const mainConfig = (dir: string) => `daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log notice;
events { worker_connections 1024; }
http {
  log_format upstream '$time_iso8601 $audit_request_id $status $request_method $uri -> $upstream_addr';
  access_log ${dir}/access.log upstream;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  include ${dir}/site.conf;
}
`

export interface RunningNginx {
  readonly base: string
  readonly pid: number
  /** nginx's error log so far, for failure messages. */
  readonly errors: Effect.Effect<string>
}

/**
 * nginx in front of the instances on `upstreamPorts`, with the shipped site
 * rendered into a temporary folder of its own, on a free loopback port.
 * Ready once `/api/health/live` answers 200 through it; stopped by its pid
 * and its folder removed when the scope closes.
 */
export const startNginx = (
  binary: string,
  upstreamPorts: ReadonlyArray<number>
): Effect.Effect<RunningNginx, Error, Scope.Scope> =>
  Effect.gen(function* () {
    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "abs-nginx-"))),
      (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    )
    // Workers run as nobody when nginx starts as root: they must reach the temp paths.
    chmodSync(dir, 0o755)
    const port = yield* freePort
    writeFileSync(join(dir, "site.conf"), renderSite(readFileSync(shippedConfig, "utf8"), port, upstreamPorts))
    writeFileSync(join(dir, "nginx.conf"), mainConfig(dir))
    const errors = Effect.sync(() =>
      existsSync(join(dir, "error.log")) ? readFileSync(join(dir, "error.log"), "utf8") : ""
    )
    const spawned: Spawned = yield* spawnLong(
      binary,
      ["-p", dir, "-c", join(dir, "nginx.conf"), "-e", join(dir, "error.log")],
      {
        logFile: join(dir, "output.log")
      }
    )
    const base = `http://127.0.0.1:${port}`
    yield* waitUntil(
      `nginx (pid ${spawned.pid}) answers at ${base}`,
      Effect.gen(function* () {
        if (yield* Deferred.isDone(spawned.exited)) {
          return yield* Effect.die(new Error(`nginx exited during start-up:\n${yield* errors}`))
        }
        return (yield* probe(`${base}/api/health/live`)) === 200
      }),
      "20 seconds"
    ).pipe(
      Effect.catch((error) => Effect.flatMap(errors, (text) => Effect.fail(new Error(`${error.message}\n${text}`))))
    )
    // Stopped gracefully first (by its pid); spawnLong's own finalizer kills what is left of its group.
    yield* Effect.addFinalizer(() => spawned.signal("SIGQUIT").pipe(Effect.andThen(spawned.awaitExit("10 seconds"))))
    return { base, pid: spawned.pid, errors }
  })
