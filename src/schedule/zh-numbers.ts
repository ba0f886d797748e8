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

const UNITS: Readonly<Record<string, number>> = { 十: 10, 百: 100, 千: 1000, 万: 10000, 萬: 10000 };
/** 廿 (20) and 卅 (30), as in 廿五号, 三月卅日. */
const TENS: Readonly<Record<string, number>> = { 廿: 20, 卅: 30 };

/** A regex source matching one number written in Arabic or Chinese digits. */
export const ZH_NUMBER = '(?:\\d+(?:\\.\\d+)?|[零〇一二两兩三四五六七八九十百千万萬廿卅]+)';

/** Reads Arabic or Chinese digits; null when the text is not a number (or is two numbers, 三四). */
export function parseZhNumber(text: string): number | null {
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text);
  if (!/^[零〇一二两兩三四五六七八九十百千万萬廿卅]+$/.test(text)) return null;
  const tens = TENS[text[0] as string];
  if (tens !== undefined) {
    if (text.length === 1) return tens;
    const unit = DIGITS[text.slice(1)];
    return text.length === 2 && unit !== undefined && unit > 0 ? tens + unit : null;
  }
  if (/[廿卅]/.test(text)) return null;
  if (!/[十百千万萬]/.test(text)) {
    // Digit by digit, as years and clock minutes are read: 二〇二五 = 2025, 零九 = 9. Two digits
    // side by side otherwise mean "this or that" (三四点, 一两个小时) and are not one number.
    if (text.length === 2 && !/^[零〇]/.test(text)) return null;
    if (text.length > 2 && /[两兩]/.test(text)) return null;
    let value = 0;
    for (const ch of text) value = value * 10 + (DIGITS[ch] as number);
    return value;
  }
  let total = 0;
  let current = 0;
  let afterDigit = false;
  for (const ch of text) {
    const unit = UNITS[ch];
    if (unit === undefined) {
      // 十二三 is "twelve or thirteen"; 一百零五 is one number.
      if (afterDigit && current !== 0) return null;
      current = DIGITS[ch] as number;
      afterDigit = true;
    } else {
      afterDigit = false;
      total += (current === 0 ? 1 : current) * unit;
      current = 0;
    }
  }
  return total + current;
}
