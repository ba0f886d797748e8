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
  [/\b(?:at\s+)?12\s+noon\b|\bnoon\s?time\b/g, 'noon'],
  [/\b(?:at\s+)?12\s+midnight\b/g, 'midnight'],
  [/\bweds\b/g, 'wed'],
];

const UNIT_WORD =
  '(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|wks?|fortnights?|months?|years?|yrs?)\\b';

/** Offsets said loosely: "a couple of hours", "in 10 more minutes", "another hour", "in a week's time". */
const OFFSET_WORDS: ReadonlyArray<[RegExp, string]> = [
  // "a few" and "a couple" are numbers only before a unit: "at a few" stays unread.
  [new RegExp(`\\ba\\s+couple(?:\\s+of)?\\s+(?=(?:more\\s+)?${UNIT_WORD})`, 'g'), '2 '],
  [new RegExp(`\\ba\\s+few\\s+(?=(?:more\\s+)?${UNIT_WORD})`, 'g'), '3 '],
  [/\b(?:three|3)\s+quarters\s+of\s+an\s+hour\b/g, '45 minutes'],
  [/\b(?:a\s+|one\s+)?quarter(?:\s+of)?\s+an?\s+hour\b|\ba\s+quarter\s+hour\b/g, '15 minutes'],
  [new RegExp(`\\b(\\d+(?:\\.\\d+)?|an?)\\s+more\\s+(?=${UNIT_WORD})`, 'g'), '$1 '],
  [new RegExp(`\\banother\\s+(?=\\d|${UNIT_WORD})`, 'g'), ''],
  [/\banother\s+(?=hour\b)/g, 'an '],
  [/\banother\s+(?=(?:minute|second|day|week|month|year)\b)/g, 'a '],
  [/(\w)'s?\s+time\b/g, '$1 time'],
  [/\b(in|within|after)\s+(?:about|around|roughly|approximately|approx\.?|some)\s+(?=\d|an?\b)/g, '$1 '],
];

/** "a.m.", "a. m.", "a m", "9a", "8:45p" → "am" / "pm" glued to the number before. */
function meridiem(text: string): string {
  return text.replace(/(\d)\s*([ap])\s?\.?\s?m\b\.?/g, '$1$2m').replace(/(\d)([ap])\b(?!\.?\s?m)/g, '$1$2m');
}

/**
 * "a quarter to 7" → "6:45", "20 minutes past 5" → "5:20", "half past 5" → "5:30", "quarter to
 * noon" → "11:45am", "half past midnight" → "12:30am".
 */
const PAST_OR_TO =
  /\b(?:a\s+)?(?:(quarter)|(half)|(\d{1,2})(?:\s*(?:minutes?|mins?))?)\s+(past|after|to|before|till|til)\s+(\d{1,2}|noon|midnight)(?![\d:])(?!\s*(?:days?|weeks?|months?|years?|hours?|minutes?|mins?|seconds?|secs?|st|nd|rd|th)\b)/g;

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
      const named = h === 'noon' ? 12 : h === 'midnight' ? 0 : undefined;
      const hour = named ?? Number(h);
      if (!(m > 0 && m < 60) || hour > 24) return whole;
      const pad = (n: number) => String(n).padStart(2, '0');
      const after = dir === 'past' || dir === 'after';
      if (named === undefined)
        return after ? `${hour}:${pad(m)}` : `${hour === 0 ? 23 : hour - 1}:${pad(60 - m)}`;
      // Around noon and midnight the side of the day is known: 11:45am, 12:15pm, 11:45pm, 12:30am.
      if (after) return `12:${pad(m)}${named === 12 ? 'pm' : 'am'}`;
      return `11:${pad(60 - m)}${named === 12 ? 'am' : 'pm'}`;
    },
  );
}

/** Clock times written without a colon: "at 0930", "0900 tomorrow", "9h30", "at 21h", "at 9 30". */
function compactClock(text: string): string {
  const pad = (h: string) => h.padStart(2, '0');
  return (
    text
      // "9h30", "18h45" (a 24-hour clock); "at 21h"; a bare "2h" stays an offset.
      .replace(/\b([01]?\d|2[0-3])h([0-5]\d)\b/g, (_, h: string, m: string) => `${pad(h)}:${m}`)
      .replace(
        /\b(at|@|by|around|until|till)\s+([01]?\d|2[0-3])h\b/g,
        (_, w: string, h: string) => `${w} ${pad(h)}:00`,
      )
      // "at 1030", "@ 2215": four digits after "at" are a time; "0900" with a leading zero anywhere.
      .replace(
        /\b(at|@|by|around|until|till)\s+([01]\d|2[0-3])([0-5]\d)\b(?!\s*(?:st|nd|rd|th)\b)/g,
        (_, w, h, m) => (h.startsWith('0') || Number(h) > 12 ? `${w} ${h}:${m}` : `${w} ${Number(h)}:${m}`),
      )
      .replace(/(^|\s)(0\d)([0-5]\d)(?=\s|$)/g, '$1$2:$3')
      // "at 9 30", "9 30 am"
      .replace(/\b(at|@|around)\s+(\d{1,2})\s+([0-5]\d)\b(?!\s*(?:st|nd|rd|th)\b|[a-z])/g, '$1 $2:$3')
      .replace(/\b(\d{1,2})\s+([0-5]\d)\s*([ap]m)\b/g, '$1:$2$3')
  );
}

/** "half nine" (British): half past nine. Not "half an hour", "half 2 days". */
const HALF_HOUR =
  /\bhalf\s+(\d{1,2})\b(?![:\d.]|\s*(?:days?|weeks?|months?|years?|hours?|minutes?|mins?|seconds?|secs?|hrs?)\b)/g;

export function normalizeEnglish(input: string): string {
  let text = input.normalize('NFKC').toLowerCase().replace(/[’‘`]/g, "'");
  // Closing punctuation says nothing about the time: "now.", "tomorrow 9am!"
  text = text.replace(/[.!?\s]+$/, '');
  for (const [re, to] of SPELLINGS) text = text.replace(re, to);
  text = numberWordsToDigits(text);
  for (const [re, to] of OFFSET_WORDS) text = text.replace(re, to);
  text = meridiem(text);
  // "8.30pm" / "at 8.30 pm" → "8:30pm"; a dot between date fields is left alone.
  text = text.replace(/\b(\d{1,2})\.(\d{2})(?=\s*[ap]m\b)/g, '$1:$2');
  text = compactClock(text);
  text = pastAndTo(text);
  text = text.replace(HALF_HOUR, (_, h: string) => `${h}:30`);
  // "jun 5 '26": a two-digit year after an apostrophe.
  text = text.replace(/(^|[\s,])'(\d{2})\b/g, (_, before: string, yy: string) => `${before}20${yy}`);
  return text.replace(/\s+/g, ' ').trim();
}
