import type { FieldIssue, LinkReference } from "../api/FieldIssues"
import type { RecordState } from "../api/StoredRecord"

const keyOf = (target: string, id: string) => `${target}\n${id}`

/** The links of `references` that a write must check: those `held` (already in the record) are not checked again. */
export const newLinks = (references: ReadonlyArray<LinkReference>, held: ReadonlyArray<LinkReference>) => {
  const kept = new Set(held.map((link) => keyOf(link.target, link.id)))
  return references.filter((link) => !kept.has(keyOf(link.target, link.id)))
}

/** The ids to look up, by target business object, each once. */
export const idsByTarget = (references: ReadonlyArray<LinkReference>): ReadonlyMap<string, ReadonlyArray<string>> => {
  const byTarget = new Map<string, Set<string>>()
  for (const { target, id } of references) byTarget.set(target, (byTarget.get(target) ?? new Set()).add(id))
  return new Map([...byTarget].map(([target, ids]) => [target, [...ids]]))
}

/**
 * The references that name no live record: `found` holds the state of each
 * record that exists, by target and id (ids compared exactly, as the service
 * writes them). Only an operational record may be linked.
 */
export const brokenLinks = (
  references: ReadonlyArray<LinkReference>,
  found: ReadonlyMap<string, ReadonlyMap<string, RecordState>>
): ReadonlyArray<FieldIssue> =>
  references.flatMap((link): Array<FieldIssue> => {
    const state = found.get(link.target)?.get(link.id)
    if (state === "operational") return []
    return [{ _tag: "BrokenLink", path: link.path, target: link.target, id: link.id, reason: state ?? "missing" }]
  })
