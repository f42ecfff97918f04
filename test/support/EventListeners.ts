export type MessageListener = (event: MessageEvent) => void

/** The listener bookkeeping of an EventSource stand-in: add, remove, and dispatch a message event. */
export class EventListeners {
  private readonly listeners = new Map<string, Set<MessageListener>>()

  addEventListener(type: string, listener: MessageListener): void {
    const set = this.listeners.get(type) ?? new Set()
    set.add(listener)
    this.listeners.set(type, set)
  }

  removeEventListener(type: string, listener: MessageListener): void {
    this.listeners.get(type)?.delete(listener)
  }

  protected dispatch(type: string, data?: string): void {
    for (const listener of [...(this.listeners.get(type) ?? [])]) listener(new MessageEvent(type, { data }))
  }
}
