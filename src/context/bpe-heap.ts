/**
 * Byte-pair merging of a long piece in O(n log n): the parts form a linked list over byte offsets
 * and the candidate pairs sit in a binary min-heap keyed by (rank, start offset), so the popped
 * pair is the lowest rank and, among equal ranks, the leftmost — the pair tiktoken's quadratic
 * scan picks. Entries are not removed when a neighbour changes; a popped entry is used only if its
 * part is still alive and its pair still has that rank (stale entries are skipped).
 */

import type { BpeMerger } from './bpe-merger.ts';

import { NO_RANK } from './bpe-tables.ts';

// rank * 2^32 + offset stays an exact double while rank < 2^21 (o200k has ~2^17.6 tokens).
const SHIFT = 2 ** 32;

class MinHeap {
  private items = new Float64Array(256);
  size = 0;

  push(key: number): void {
    if (this.size === this.items.length) {
      const grown = new Float64Array(this.items.length * 2);
      grown.set(this.items);
      this.items = grown;
    }
    const items = this.items;
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (items[parent]! <= key) break;
      items[i] = items[parent]!;
      i = parent;
    }
    items[i] = key;
  }

  pop(): number {
    const items = this.items;
    const top = items[0]!;
    const last = items[--this.size]!;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= this.size) break;
      if (child + 1 < this.size && items[child + 1]! < items[child]!) child++;
      if (items[child]! >= last) break;
      items[i] = items[child]!;
      i = child;
    }
    items[i] = last;
    return top;
  }
}

/** The number of tokens left of the n parts in `initial` (their ranks) after byte-pair merging. */
export function mergeLongPiece(merger: BpeMerger, initial: Int32Array, n: number): number {
  // next[i]: offset of the part after the part starting at i (n at the end); -1 once merged away.
  const next = new Int32Array(n);
  const prev = new Int32Array(n);
  const rank = new Int32Array(n);
  const pairRank = new Int32Array(n);
  const heap = new MinHeap();
  for (let i = 0; i < n; i++) {
    next[i] = i + 1;
    prev[i] = i - 1;
    rank[i] = initial[i]!;
  }
  const rankWithNext = (i: number): number => {
    const j = next[i]!;
    if (j >= n) return NO_RANK;
    return merger.pairRank(rank[i]!, rank[j]!);
  };
  const offer = (i: number): void => {
    const r = rankWithNext(i);
    pairRank[i] = r;
    if (r !== NO_RANK) heap.push(r * SHIFT + i);
  };
  for (let i = 0; i < n; i++) offer(i);
  let parts = n;
  while (heap.size > 0) {
    const key = heap.pop();
    const r = Math.floor(key / SHIFT);
    const i = key - r * SHIFT;
    if (next[i] === -1 || pairRank[i] !== r) continue;
    const j = next[i]!;
    // Merge part j into part i.
    rank[i] = r;
    next[i] = next[j]!;
    if (next[j]! < n) prev[next[j]!] = i;
    next[j] = -1;
    parts--;
    offer(i);
    if (prev[i]! >= 0) offer(prev[i]!);
  }
  return parts;
}
