/**
 * Reads of one kind, for many runs, asked for in the same turn of the event loop go to the server
 * as one query. A worker that claims sixteen runs starts sixteen attempts at once, and each reads
 * its memoized steps and its last checkpoint: 32 round trips (and 32 statements for the server to
 * parse and plan) become 2. A read waits at most for the end of the current turn.
 */
export class BatchedReads<V> {
  private waiting = new Map<string, Array<{ resolve: (v: V) => void; reject: (e: unknown) => void }>>();

  constructor(
    /** Loads the values of these ids (an id with nothing gets `none`). */
    private readonly load: (ids: string[]) => Promise<Map<string, V>>,
    private readonly none: () => V,
  ) {}

  get(id: string): Promise<V> {
    return new Promise<V>((resolve, reject) => {
      if (this.waiting.size === 0) setImmediate(() => void this.flush());
      const list = this.waiting.get(id);
      if (list) list.push({ resolve, reject });
      else this.waiting.set(id, [{ resolve, reject }]);
    });
  }

  private async flush(): Promise<void> {
    const waiting = this.waiting;
    this.waiting = new Map();
    try {
      const values = await this.load([...waiting.keys()]);
      for (const [id, list] of waiting) for (const w of list) w.resolve(values.get(id) ?? this.none());
    } catch (error) {
      for (const list of waiting.values()) for (const w of list) w.reject(error);
    }
  }
}
