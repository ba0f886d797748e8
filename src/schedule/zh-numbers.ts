/** Chinese numerals as they appear in time expressions: 三, 十五, 二十三, 两, 零九, 二〇二五, 一百. */

const DIGITS: Readonly<Record<string, number>> = {
  零: 0,
  〇: 0,
  一: 1,
  二: 2,
  两: 2,
  兩: 2,
  三: 3,
  四: 4,
  五: 5,
  六: 6,
  七: 7,
  八: 8,
  九: 9,
};

const UNITS: Readonly<Record<string, number>> = { 十: 10, 百: 100, 千: 1000 };

/** A regex source matching one number written in Arabic or Chinese digits. */
export const ZH_NUMBER = '(?:\\d+(?:\\.\\d+)?|[零〇一二两兩三四五六七八九十百千]+)';

/** Reads Arabic or Chinese digits; null when the text is not a number. */
export function parseZhNumber(text: string): number | null {
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text);
  if (!/^[零〇一二两兩三四五六七八九十百千]+$/.test(text)) return null;
  if (!/[十百千]/.test(text)) {
    // Digit by digit, as years and clock minutes are read: 二〇二五 = 2025, 零九 = 9.
    let value = 0;
    for (const ch of text) value = value * 10 + (DIGITS[ch] as number);
    return value;
  }
  let total = 0;
  let current = 0;
  for (const ch of text) {
    const unit = UNITS[ch];
    if (unit === undefined) {
      current = DIGITS[ch] as number;
    } else {
      total += (current === 0 ? 1 : current) * unit;
      current = 0;
    }
  }
  return total + current;
}
