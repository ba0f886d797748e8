/**
 * The merge rank of a pair of tokens, keyed by the two ranks: (left, right) → rank of the token
 * whose bytes are left's then right's, or "no such token". Open addressing over typed arrays so a
 * lookup allocates nothing; cleared when half full, which bounds its memory (~3 MB) on any input.
 */

const CAPACITY = 1 << 18;
const MASK = CAPACITY - 1;

export class PairTable {
  static readonly MISSING = -1;
  private readonly lefts = new Int32Array(CAPACITY).fill(-1);
  private readonly rights = new Int32Array(CAPACITY);
  private readonly ranks = new Int32Array(CAPACITY);
  private size = 0;

  private static slot(left: number, right: number): number {
    return (Math.imul(left, 0x9e3779b1) ^ Math.imul(right + 0x7f4a7c15, 0x85ebca77)) >>> 14;
  }

  get(left: number, right: number): number {
    for (let i = PairTable.slot(left, right) & MASK; ; i = (i + 1) & MASK) {
      const l = this.lefts[i]!;
      if (l === -1) return PairTable.MISSING;
      if (l === left && this.rights[i] === right) return this.ranks[i]!;
    }
  }

  set(left: number, right: number, rank: number): void {
    if (this.size >= CAPACITY >>> 1) {
      this.lefts.fill(-1);
      this.size = 0;
    }
    let i = PairTable.slot(left, right) & MASK;
    while (this.lefts[i] !== -1) {
      if (this.lefts[i] === left && this.rights[i] === right) break;
      i = (i + 1) & MASK;
    }
    if (this.lefts[i] === -1) this.size++;
    this.lefts[i] = left;
    this.rights[i] = right;
    this.ranks[i] = rank;
  }
}
