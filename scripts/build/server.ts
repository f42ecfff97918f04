import * as esbuild from "esbuild"

/**
 * Modules that the package barrels (`@effect/platform`'s index) re-export but
 * that the service only imports lazily: esbuild puts a module in the chunk of
 * every entry that can reach it through an import, used or not, so the barrel
 * alone would load them at start. Reached from the barrel they resolve to an
 * empty module; imported by their own path (src/http/apiDocsPage.ts) they are
 * the real one, in a chunk of their own.
 */
const lazyOnly: esbuild.Plugin = {
  name: "lazy-only",
  setup(build) {
    build.onResolve({ filter: /^\.\/HttpApiSwagger\.js$/ }, (args) =>
      /@effect\/platform\/dist\/esm\/index\.js$/.test(args.importer)
        ? { path: "HttpApiSwagger (lazy only)", namespace: "lazy-only" }
        : undefined
    )
    build.onLoad({ filter: /.*/, namespace: "lazy-only" }, () => ({ contents: "export {}", loader: "js" }))
  }
}

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
    target: "node20",
    external: ["@electric-sql/pglite", "@electric-sql/pglite-socket"],
    plugins: [lazyOnly],
    // The bundled CommonJS packages (pg, ioredis, undici) call `require` and read `__dirname`.
    banner: {
      js: [
        'import { createRequire as __createRequire } from "node:module";',
        'import { dirname as __pathDirname } from "node:path";',
        'import { fileURLToPath as __fileURLToPath } from "node:url";',
        "const require = __createRequire(import.meta.url);",
        "const __filename = __fileURLToPath(import.meta.url);",
        "const __dirname = __pathDirname(__filename);"
      ].join(" ")
    },
    // Without whitespace the code Node keeps in memory is ~8 MiB smaller (bench/start.ts); names stay, so a
    // logged stack still reads, and `node --enable-source-maps` maps it back to src/.
    minifySyntax: true,
    minifyWhitespace: true,
    keepNames: true,
    sourcemap: true,
    logLevel: "warning"
  })
