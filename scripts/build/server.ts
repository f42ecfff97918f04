import * as esbuild from "esbuild"
import { createRequire } from "node:module"

/**
 * CommonJS packages that @effect/platform-node imports at the top of modules
 * (ws: `NodeHttpServer` imports `NodeWS` for WebSocket upgrades; undici:
 * `NodeHttpClient`'s `Undici` module) but that the service only calls into on
 * paths it does not take: its own HTTP client is `FetchHttpClient` (Node's
 * built-in fetch), and it upgrades no connection. Evaluated at start they cost
 * 15 to 20 MiB of resident memory (bench/NOTES.md, "Memory"); with
 * @effect/platform-node 4, ws is still on the start path, undici is not (the
 * stand-in keeps it so). Each is replaced by a stand-in
 * with the same export names whose first use of any of them loads the real
 * package from node_modules (as PGlite is), so nothing behaves differently,
 * only later. Left out of the bundle, their code is not even parsed at start.
 */
export const lazyCommonJs = (packages: ReadonlyArray<string>): esbuild.Plugin => ({
  name: "lazy-commonjs",
  setup(build) {
    const require = createRequire(import.meta.url)
    const filter = new RegExp(`^(${packages.join("|")})$`)
    build.onResolve({ filter }, (args) =>
      args.namespace === "lazy-commonjs"
        ? { path: args.path, external: true }
        : { path: args.path, namespace: "lazy-commonjs" }
    )
    build.onLoad({ filter: /.*/, namespace: "lazy-commonjs" }, (args) => {
      const names = Object.keys(require(args.path))
      return {
        loader: "js",
        resolveDir: process.cwd(),
        contents: [
          "let real",
          `const load = () => (real ??= require(${JSON.stringify(args.path)}))`,
          `const names = ${JSON.stringify(names)}`,
          "module.exports = new Proxy({}, {",
          // esbuild's interop asks for `__esModule` when it imports the stand-in: it is not a use.
          '  get: (_, key) => (key === "__esModule" ? undefined : load()[key]),',
          "  has: (_, key) => key in load(),",
          "  ownKeys: () => names,",
          "  getOwnPropertyDescriptor: (_, key) =>",
          "    names.includes(key) ? { enumerable: true, configurable: true, get: () => load()[key] } : undefined",
          "})"
        ].join("\n")
      }
    })
  }
})

/** The bundled CommonJS packages (pg, ioredis) call `require` and read `__dirname`. */
export const requireBanner = [
  'import { createRequire as __createRequire } from "node:module";',
  'import { dirname as __pathDirname } from "node:path";',
  'import { fileURLToPath as __fileURLToPath } from "node:url";',
  "const require = __createRequire(import.meta.url);",
  "const __filename = __fileURLToPath(import.meta.url);",
  "const __dirname = __pathDirname(__filename);"
].join(" ")

/**
 * The service (`src/main.ts`) and the admin command line (`src/cli/main.ts`)
 * bundled with their dependencies into `dist/server` (ESM, a shared chunk):
 * Node then reads a few files at start instead of effect's thousands of
 * modules. PGlite stays outside, loaded from node_modules, so its WebAssembly
 * and data files are found next to its own code as it expects.
 */
export const buildServer = (outdir: string) =>
  esbuild.build({
    entryPoints: { main: "src/main.ts", admin: "src/cli/main.ts" },
    outdir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node22",
    external: ["@electric-sql/pglite", "@electric-sql/pglite-socket"],
    // esbuild puts a module in the start chunks of every entry that reaches it by a static import, used or not:
    // `effect/http-api`'s barrel re-exports `HttpApiSwagger` (its page template; the assets are its own dynamic
    // import), so src/ imports each http-api module by its own path (biome.json) and `HttpApiSwagger` only in
    // src/http/apiDocsPage.ts, loaded on the first /api/docs request (test/build/clientPackage.test.ts).
    plugins: [lazyCommonJs(["undici", "ws"])],
    banner: { js: requireBanner },
    // Without whitespace the code Node keeps in memory is ~8 MiB smaller (bench/start.ts); identifiers are not
    // minified, so a logged stack still reads, and `node --enable-source-maps` maps it back to src/. No
    // `keepNames`: it wraps every function expression in a `__name` call, at each creation of a closure too (about
    // 3 % of the service's CPU per request, bench/NOTES.md); only a name esbuild renames for a clash changes.
    minifySyntax: true,
    minifyWhitespace: true,
    sourcemap: true,
    logLevel: "warning"
  })
