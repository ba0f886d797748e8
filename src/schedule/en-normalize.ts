import { numberWordsToDigits } from './en-numbers.ts';

/**
 * Rewrites English text into the small vocabulary the grammar reads: lowercase, digits, "am"/"pm"
 * glued to the time, "h:mm" clock times, one spelling per word.
 */

const SPELLINGS: ReadonlyArray<[RegExp, string]> = [
  [/\b(?:tmrw|tmw|tmr|tmrow|tomorow|tommorow|tommorrow)\b/g, 'tomorrow'],
  [/\b(?:tonite|tonght)\b/g, 'tonight'],
  [/\b(?:tdy|2day)\b/g, 'today'],
  [/\b(?:the\s+)?eod\b/g, 'end of day'],
  [/\b(?:the\s+)?eow\b/g, 'end of week'],
  [/\b(?:the\s+)?eom\b/g, 'end of month'],
  [/\bmid-?day\b/g, 'noon'],
  [/\bo'?\s?clock\b|\boclock\b/g, "o'clock"],
  [/\ba\s+couple\s+of\b/g, '2'],
  [/\ba\s+few\b/g, '3'],
];

/** "a.m.", "a. m.", "a m", "9a", "8:45p" → "am" / "pm" glued to the number before. */
function meridiem(text: string): string {
  return text.replace(/(\d)\s*([ap])\s?\.?\s?m\b\.?/g, '$1$2m').replace(/(\d)([ap])\b(?!\.?\s?m)/g, '$1$2m');
}

/** "a quarter to 7" → "6:45", "20 minutes past 5" → "5:20", "half past 5" → "5:30". */
const PAST_OR_TO =
  /\b(?:a\s+)?(?:(quarter)|(half)|(\d{1,2})(?:\s*(?:minutes?|mins?))?)\s+(past|after|to|before|till|til)\s+(\d{1,2})(?![\d:])(?!\s*(?:days?|weeks?|months?|years?|hours?|minutes?|mins?|seconds?|secs?|st|nd|rd|th)\b)/g;

function pastAndTo(text: string): string {
  return text.replace(
    PAST_OR_TO,
    (
      whole,
      quarter: string | undefined,
      half: string | undefined,
      minutes: string | undefined,
      dir: string,
      h: string,
    ) => {
      const m = quarter ? 15 : half ? 30 : Number(minutes);
      const hour = Number(h);
      if (!(m > 0 && m < 60) || hour > 24) return whole;
      const pad = (n: number) => String(n).padStart(2, '0');
      if (dir === 'past' || dir === 'after') return `${hour}:${pad(m)}`;
      return `${hour === 0 ? 23 : hour - 1}:${pad(60 - m)}`;
    },
  );
}

export function normalizeEnglish(input: string): string {
  let text = input.normalize('NFKC').toLowerCase().replace(/[’‘`]/g, "'");
  for (const [re, to] of SPELLINGS) text = text.replace(re, to);
  text = numberWordsToDigits(text);
  text = meridiem(text);
  // "8.30pm" / "at 8.30 pm" → "8:30pm"; a dot between date fields is left alone.
  text = text.replace(/\b(\d{1,2})\.(\d{2})(?=\s*[ap]m\b)/g, '$1:$2');
  text = text.replace(/\b(\d{1,2})h(\d{2})\b/g, '$1:$2');
  text = pastAndTo(text);
  return text.replace(/\s+/g, ' ').trim();
}
