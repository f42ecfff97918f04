import * as esbuild from "esbuild"

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
    // Without whitespace the code Node keeps in memory is ~8 MiB smaller (bench/start.ts); identifiers are not
    // minified, so a logged stack still reads, and `node --enable-source-maps` maps it back to src/. No
    // `keepNames`: it wraps every function expression in a `__name` call, at each creation of a closure too (about
    // 3 % of the service's CPU per request, bench/NOTES.md); only a name esbuild renames for a clash changes.
    minifySyntax: true,
    minifyWhitespace: true,
    sourcemap: true,
    logLevel: "warning"
  })
