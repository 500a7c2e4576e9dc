// A tiny typed event emitter. Listeners run synchronously in registration order; one that throws is
// reported to `onListenerError` and never breaks the protocol step that emitted the event.

export type Listener<T> = (payload: T) => void;

/** The emitting side only, so a producer of some events can be handed an emitter of more. */
export interface EventSink<Events extends object> {
  has(event: keyof Events): boolean;
  emit<K extends keyof Events>(event: K, payload: Events[K]): void;
}

export class TypedEmitter<Events extends object> implements EventSink<Events> {
  private readonly listeners = new Map<keyof Events, Listener<never>[]>();

  constructor(private readonly onListenerError: (error: unknown) => void) {}

  /** Adds a listener; the returned function removes it. */
  on<K extends keyof Events>(event: K, listener: Listener<Events[K]>): () => void {
    const list = this.listeners.get(event) ?? [];
    list.push(listener as Listener<never>);
    this.listeners.set(event, list);
    return () => {
      const current = this.listeners.get(event);
      if (current === undefined) return;
      const index = current.indexOf(listener as Listener<never>);
      if (index >= 0) current.splice(index, 1);
    };
  }

  /** Whether anyone listens, so emitters can skip building a payload nobody reads. */
  has(event: keyof Events): boolean {
    const list = this.listeners.get(event);
    return list !== undefined && list.length > 0;
  }

  emit<K extends keyof Events>(event: K, payload: Events[K]): void {
    const list = this.listeners.get(event);
    if (list === undefined) return;
    for (const listener of [...list]) {
      try {
        (listener as Listener<Events[K]>)(payload);
      } catch (error) {
        this.onListenerError(error);
      }
    }
  }
}
