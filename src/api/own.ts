/**
 * `object[key]` when `key` is the object's own property, undefined otherwise.
 * Field names, record ids and other names come from data: looked up with
 * plain indexing, "constructor" or "toString" would find Object.prototype's
 * members, and "__proto__" the prototype itself. Objects built from such
 * names are made with `Object.fromEntries` (or a spread), which define own
 * properties, never with `out[name] = value`, which for "__proto__" would
 * replace the prototype instead.
 */
export const own = <V>(object: { readonly [key: string]: V }, key: string): V | undefined =>
  Object.hasOwn(object, key) ? object[key] : undefined
