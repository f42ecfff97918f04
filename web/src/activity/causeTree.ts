import type { Traceable } from "../timeline/causeEntry"
import { findCauseEntry } from "../timeline/causeEntry"

/** A row of a unit of work's story and the rows it caused, each under its cause. */
export interface CauseNode<E> {
  readonly entry: E
  readonly children: ReadonlyArray<CauseNode<E>>
}

/**
 * A story's rows (in commit order) as a tree: a row caused by an event
 * nests under the row of that event (its record and operation, the same
 * unit first, else the latest one before it: `findCauseEntry`), looked for
 * among the rows before it, so no row can be its own ancestor. A row whose
 * cause is not an event, or whose causing row is not in the story (not
 * readable, or written before it), is a root. Every row appears once;
 * siblings keep commit order. Pure.
 */
export const causeTree = <E extends Traceable>(rows: ReadonlyArray<E>): ReadonlyArray<CauseNode<E>> => {
  const children = new Map<E, Array<CauseNode<E>>>()
  const roots: Array<CauseNode<E>> = []
  const earlier: Array<E> = []
  for (const entry of rows) {
    const node: { entry: E; children: Array<CauseNode<E>> } = { entry, children: [] }
    children.set(entry, node.children)
    // Newest first, as findCauseEntry takes its candidates.
    const parent = findCauseEntry(entry, earlier)
    const siblings = parent === undefined ? undefined : children.get(parent)
    if (siblings === undefined) roots.push(node)
    else siblings.push(node)
    earlier.unshift(entry)
  }
  return roots
}
