import type { StreamRevocation } from "./StreamRevocation"

/** Whose stream it is: for the cap per session and for revocations. */
export interface StreamOwner {
  /** The session's token hash. */
  readonly session: string
  readonly userId: string
  readonly workspaceId: string
}

/** What the index needs of a stream: dropping it when its session is over the cap. */
export interface Evictable {
  destroy(): void
}

/**
 * The streams open on this instance by session and by user: which ones a
 * revocation names, and each session's cap. A session's streams are kept
 * oldest first (a Set keeps insertion order), so that one stream past the
 * cap drops the oldest.
 */
export class StreamIndex<S extends Evictable> {
  private readonly bySession = new Map<string, Set<S>>()
  /** Each user's streams, with the workspace each belongs to. */
  private readonly byUser = new Map<string, Map<S, string>>()

  constructor(private readonly capPerSession: number) {}

  /**
   * Adds a stream; past its session's cap the session's OLDEST stream is
   * dropped (`destroy`) and forgotten. Returns the stream's release (idempotent).
   */
  register(owner: StreamOwner, stream: S): () => void {
    const sessionStreams = getOrAdd(this.bySession, owner.session, () => new Set<S>())
    sessionStreams.add(stream)
    for (const oldest of sessionStreams) {
      if (sessionStreams.size <= this.capPerSession) break
      sessionStreams.delete(oldest)
      oldest.destroy()
    }
    const userStreams = getOrAdd(this.byUser, owner.userId, () => new Map<S, string>())
    userStreams.set(stream, owner.workspaceId)
    return () => {
      sessionStreams.delete(stream)
      if (sessionStreams.size === 0 && this.bySession.get(owner.session) === sessionStreams) {
        this.bySession.delete(owner.session)
      }
      userStreams.delete(stream)
      if (userStreams.size === 0 && this.byUser.get(owner.userId) === userStreams) this.byUser.delete(owner.userId)
    }
  }

  /** The streams a revocation names (a copy: ending them may release them). */
  named(revocation: StreamRevocation): ReadonlyArray<S> {
    if (revocation._tag === "Session") return [...(this.bySession.get(revocation.tokenHash) ?? [])]
    const named: Array<S> = []
    if (revocation._tag === "Workspace") {
      // A dropped workspace is rare enough to look through every stream rather than keep a third index.
      for (const streams of this.byUser.values()) {
        for (const [stream, workspaceId] of streams) if (workspaceId === revocation.workspaceId) named.push(stream)
      }
      return named
    }
    for (const userId of revocation.userIds) {
      for (const [stream, workspaceId] of this.byUser.get(userId) ?? []) {
        if (revocation.workspaceId === null || revocation.workspaceId === workspaceId) named.push(stream)
      }
    }
    return named
  }

  /** Sessions and users with at least one stream (what the index holds on to). */
  get size(): { readonly sessions: number; readonly users: number } {
    return { sessions: this.bySession.size, users: this.byUser.size }
  }
}

const getOrAdd = <K, V>(map: Map<K, V>, key: K, make: () => V): V => {
  const found = map.get(key)
  if (found !== undefined) return found
  const made = make()
  map.set(key, made)
  return made
}
