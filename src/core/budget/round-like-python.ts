/**
 * `round(x, 2)` exactly as Python computes it, because the protocol's assessment is specified in
 * Python and agents compare numbers with it: correctly rounded from the double's exact value, with
 * exact ties to even. Plain `Math.round(x * 100) / 100` gets 1.005 and 2.675 wrong (the product
 * rounds up across the midpoint) and rounds ties up instead of to even.
 *
 * The fast path covers every value whose scaled fraction is not within 1e-7 of a half (the product's
 * error is far smaller than that for any realistic percentage or rate); near-halves take the exact
 * path through `toFixed`, which the spec defines on the exact value. `-0` comes out as `0`.
 */
export function roundTo2(x: number): number {
  if (!Number.isFinite(x)) return x;
  const scaled = x * 100;
  const fraction = Math.abs(scaled - Math.trunc(scaled));
  if (Math.abs(fraction - 0.5) > 1e-7) return Math.round(scaled) / 100 || 0;
  const abs = Math.abs(x);
  const sign = x < 0 ? -1 : 1;
  // A double lies exactly halfway between two hundredths only if it is an odd multiple of 1/8
  // (0.125, 0.375, …); then Python picks the neighbour with an even last digit. `toFixed` rounds
  // such ties away from zero, so the toward-zero neighbour is read from the exact 3-digit form.
  const eighths = abs * 8;
  if (Number.isInteger(eighths) && eighths % 2 !== 0) {
    const towardZero = abs.toFixed(3).slice(0, -1);
    const even = (towardZero.charCodeAt(towardZero.length - 1) - 48) % 2 === 0;
    return sign * Number(even ? towardZero : abs.toFixed(2)) || 0;
  }
  return sign * Number(abs.toFixed(2)) || 0;
}
