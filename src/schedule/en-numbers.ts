/**
 * English number words to digits, so the grammar only sees digits: "twenty seventh" → "27th",
 * "two thousand and eighteen" → "2018", and an hour word followed by a minute word is a clock
 * time: "five-thirty" → "5:30", "one thirty" → "1:30".
 */

const SMALL: Readonly<Record<string, number>> = {
  zero: 0,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
};
const TENS: Readonly<Record<string, number>> = {
  twenty: 20,
  thirty: 30,
  forty: 40,
  fifty: 50,
  sixty: 60,
  seventy: 70,
  eighty: 80,
  ninety: 90,
};
const ORDINAL: Readonly<Record<string, number>> = {
  first: 1,
  second: 2,
  third: 3,
  fourth: 4,
  fifth: 5,
  sixth: 6,
  seventh: 7,
  eighth: 8,
  ninth: 9,
  tenth: 10,
  eleventh: 11,
  twelfth: 12,
  thirteenth: 13,
  fourteenth: 14,
  fifteenth: 15,
  sixteenth: 16,
  seventeenth: 17,
  eighteenth: 18,
  nineteenth: 19,
  twentieth: 20,
  thirtieth: 30,
};
const SCALE: Readonly<Record<string, number>> = { hundred: 100, thousand: 1000 };

const WORD = [...Object.keys(SMALL), ...Object.keys(TENS), ...Object.keys(ORDINAL), ...Object.keys(SCALE)]
  .sort((a, b) => b.length - a.length)
  .join('|');
// A run of number words joined by spaces, hyphens or "and" (inside "two thousand and eighteen").
const RUN = new RegExp(`\\b(?:${WORD})\\b(?:(?:\\s+and\\s+|[\\s-]+)(?:${WORD})\\b)*`, 'g');
const SECOND_AS_ORDINAL = /\bsecond(?=\s+(?:(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*|of|day)\b)/g;

interface Num {
  value: number;
  ordinal: boolean;
  /** Made of a single word below 10 ("five"), so a following minute word makes a clock time. */
  simple: boolean;
  /** Can take a following unit word ("twenty" + "seven"). */
  openTens: boolean;
}

function readRun(words: string[]): Num[] {
  const out: Num[] = [];
  for (const w of words) {
    if (w === 'and') continue;
    const last = out[out.length - 1];
    const small = SMALL[w];
    const tens = TENS[w];
    const ord = ORDINAL[w];
    const scale = SCALE[w];
    if (scale !== undefined && last && !last.ordinal && last.value < scale) {
      last.value = last.value * scale;
      last.simple = false;
      last.openTens = false;
      continue;
    }
    const unit = small ?? ord;
    if (unit !== undefined && unit < 10 && last?.openTens) {
      last.value += unit;
      last.ordinal = ord !== undefined;
      last.openTens = false;
      continue;
    }
    const addend = small ?? tens ?? ord;
    if (addend !== undefined && last && !last.ordinal && last.value >= 100 && last.value % 100 === 0) {
      // "two thousand and eighteen", "one hundred twenty"
      last.value += addend;
      last.ordinal = ord !== undefined;
      last.openTens = tens !== undefined;
      continue;
    }
    if (addend === undefined) {
      out.push({ value: scale ?? 0, ordinal: false, simple: false, openTens: false });
      continue;
    }
    out.push({
      value: addend,
      ordinal: ord !== undefined,
      simple: small !== undefined,
      openTens: tens !== undefined,
    });
  }
  return out;
}

function render(nums: Num[]): string {
  const parts: string[] = [];
  for (let i = 0; i < nums.length; i++) {
    const n = nums[i] as Num;
    const next = nums[i + 1];
    if (n.simple && !n.ordinal && n.value >= 1 && n.value <= 12 && next && !next.ordinal) {
      if (next.value >= 10 && next.value < 60) {
        parts.push(`${n.value}:${String(next.value).padStart(2, '0')}`);
        i++;
        continue;
      }
    }
    parts.push(n.ordinal ? `${n.value}th` : String(n.value));
  }
  return parts.join(' ');
}

/** Replaces number words with digits in lowercase text. */
export function numberWordsToDigits(text: string): string {
  // "second" is a unit of time unless it names a weekday or a day ("second monday", "the second of").
  const marked = text.replace(SECOND_AS_ORDINAL, '2nd');
  return marked.replace(RUN, (run) => {
    const words = run.split(/[\s-]+/).filter((w) => w.length > 0);
    if (words.includes('second')) {
      // A unit here ("one second"): convert the words before it only.
      const at = words.indexOf('second');
      const before = words.slice(0, at);
      return [before.length ? render(readRun(before)) : '', ...words.slice(at)].filter(Boolean).join(' ');
    }
    return render(readRun(words));
  });
}
