/**
 * The merge rank of a pair of tokens, keyed by the two ranks: (left, right) → rank of the token
 * whose bytes are left's then right's, or "no such token". Open addressing over one typed array so a
 * lookup allocates nothing and touches one cache line (left, right and rank side by side in a slot of
 * 16 bytes); cleared when half full, which bounds its memory (4 MB) on any input.
 */

const CAPACITY = 1 << 18;
const MASK = CAPACITY - 1;

export class PairTable {
  static readonly MISSING = -1;
  /** Slot i: [4i] left (-1 when empty), [4i + 1] right, [4i + 2] rank. */
  private readonly slots = new Int32Array(CAPACITY * 4).fill(-1);
  private size = 0;

  private static slot(left: number, right: number): number {
    return (Math.imul(left, 0x9e3779b1) ^ Math.imul(right + 0x7f4a7c15, 0x85ebca77)) >>> 14;
  }

  get(left: number, right: number): number {
    const slots = this.slots;
    for (let i = PairTable.slot(left, right) & MASK; ; i = (i + 1) & MASK) {
      const l = slots[i << 2]!;
      if (l === -1) return PairTable.MISSING;
      if (l === left && slots[(i << 2) + 1] === right) return slots[(i << 2) + 2]!;
    }
  }

  set(left: number, right: number, rank: number): void {
    const slots = this.slots;
    if (this.size >= CAPACITY >>> 1) {
      slots.fill(-1);
      this.size = 0;
    }
    let i = PairTable.slot(left, right) & MASK;
    while (slots[i << 2] !== -1) {
      if (slots[i << 2] === left && slots[(i << 2) + 1] === right) break;
      i = (i + 1) & MASK;
    }
    if (slots[i << 2] === -1) this.size++;
    slots[i << 2] = left;
    slots[(i << 2) + 1] = right;
    slots[(i << 2) + 2] = rank;
  }
}
