import * as chrono from 'chrono-node';
import { DateTime, FixedOffsetZone } from 'luxon';

/**
 * chrono-node as the last resort for English formats our grammar does not know. chrono reads
 * wall-clock fields through the server's Date, so it gets the reference as an offset (not a zone)
 * and we take only its fields, rebuilding the instant in the user's zone with luxon. A result is
 * kept only when chrono's match covers the whole text, so a half-read expression is refused.
 */

const FILLER = /\b(?:at|on|the|in|of|by|around|about|for|and|please)\b|[\s,.\-@~()]/g;

export function parseWithChrono(text: string, now: DateTime): DateTime | null {
  const results = chrono.parse(
    text,
    { instant: now.toJSDate(), timezone: now.offset },
    { forwardDate: true },
  );
  if (results.length !== 1) return null;
  const r = results[0] as chrono.ParsedResult;
  const left = text.slice(0, r.index) + text.slice(r.index + r.text.length);
  if (left.replace(FILLER, '') !== '') return null;
  const c = r.start;
  const fields = {
    year: c.get('year') ?? now.year,
    month: c.get('month') ?? now.month,
    day: c.get('day') ?? now.day,
    // A date without a time keeps the reference's time of day, as in our own grammar.
    ...(c.isCertain('hour')
      ? { hour: c.get('hour') ?? 0, minute: c.get('minute') ?? 0, second: c.get('second') ?? 0 }
      : { hour: now.hour, minute: now.minute, second: now.second }),
  };
  const offset = c.isCertain('timezoneOffset') ? c.get('timezoneOffset') : null;
  const zone = offset === null ? now.zone : FixedOffsetZone.instance(offset);
  const at = DateTime.fromObject(fields, { zone }).setZone(now.zone);
  return at.isValid ? at : null;
}
