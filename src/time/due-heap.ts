/**
 * A binary min-heap of (timer id, due time) with lazy deletion: a cleared or fired timer's entry
 * stays until it reaches the top, where `earliest` drops it because its id is no longer live.
 * `rebuild` bounds the garbage when many timers are cleared long before they are due.
 */
export class DueHeap {
  private ids: number[] = [];
  private dues: number[] = [];

  get size(): number {
    return this.ids.length;
  }

  push(id: number, due: number): void {
    this.ids.push(id);
    this.dues.push(due);
    this.up(this.ids.length - 1);
  }

  /** The earliest due time among live timers, dropping dead entries on the way. */
  earliest(live: ReadonlyMap<number, unknown>): number | undefined {
    while (this.ids.length > 0 && !live.has(this.ids[0] as number)) this.pop();
    return this.dues[0];
  }

  /** Keeps only the live timers. */
  rebuild(live: ReadonlyMap<number, { due: number }>): void {
    this.ids = [];
    this.dues = [];
    for (const [id, t] of live) this.push(id, t.due);
  }

  private pop(): void {
    const lastId = this.ids.pop() as number;
    const lastDue = this.dues.pop() as number;
    if (this.ids.length === 0) return;
    this.ids[0] = lastId;
    this.dues[0] = lastDue;
    this.down(0);
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((this.dues[parent] as number) <= (this.dues[i] as number)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    const n = this.ids.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let least = i;
      if (l < n && (this.dues[l] as number) < (this.dues[least] as number)) least = l;
      if (r < n && (this.dues[r] as number) < (this.dues[least] as number)) least = r;
      if (least === i) return;
      this.swap(i, least);
      i = least;
    }
  }

  private swap(a: number, b: number): void {
    [this.ids[a], this.ids[b]] = [this.ids[b] as number, this.ids[a] as number];
    [this.dues[a], this.dues[b]] = [this.dues[b] as number, this.dues[a] as number];
  }
}
