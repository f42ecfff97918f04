/**
 * `src/` imports its own files without an extension (`moduleResolution:
 * bundler`); Node's ESM loader and `node16` type resolution need the file's
 * full name. This rewrites every relative specifier of an emitted `.js` or
 * `.d.ts` file (`from "./x"`, `import "./x"`, `import("./x")`) to the name
 * `resolve` finds for it (`./x.js`, `./x/index.js`); others stay as they are.
 */
const specifierPattern = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(["'])(\.\.?\/[^"']*|\.\.?)\2/g

export const rewriteRelativeSpecifiers = (text: string, resolve: (specifier: string) => string | undefined): string =>
  text.replace(specifierPattern, (whole, keyword: string, quote: string, specifier: string) => {
    const resolved = resolve(specifier)
    return resolved === undefined ? whole : `${keyword}${quote}${resolved}${quote}`
  })

/** The emitted file a relative specifier names: itself when it has `.js`, else `<it>.js` or `<it>/index.js`. */
export const emittedFileFor = (specifier: string, exists: (relativePath: string) => boolean): string | undefined => {
  if (specifier.endsWith(".js")) return undefined
  const base = specifier.replace(/\/$/, "")
  if (exists(`${base}.js`)) return `${base}.js`
  if (exists(`${base}/index.js`)) return `${base}/index.js`
  return undefined
}
