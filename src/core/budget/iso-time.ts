import { ValidationError } from '../errors.ts';

/**
 * UTC ISO-8601 at whole-second precision ("2026-02-09T12:00:00Z"), the form the protocols' wire
 * formats use. Hand-rolled because `new Date(ms).toISOString()` costs ~4× more and the time
 * assessment formats two instants on every checkpoint. The date comes from the days-from-civil
 * inverse (H. Hinnant's `civil_from_days`), which is exact for the proleptic Gregorian calendar.
 *
 * Always second precision, never a varying width: "…:00Z" and "…:00.500Z" would not sort as text.
 * Instants are floored to their second (the one they fall in), also before 1970.
 */

const MS_PER_DAY = 86_400_000;
/** Date's own range (ECMA-262 TimeClip): ±100,000,000 days around the epoch. */
const MAX_TIME_MS = 8.64e15;
/** 0000-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z: the four-digit years this formatter writes. */
const FOUR_DIGIT_MIN_MS = -62_167_219_200_000;
const FOUR_DIGIT_MAX_MS = 253_402_300_799_999;

const TWO_DIGITS: readonly string[] = Array.from({ length: 100 }, (_, i) => (i < 10 ? `0${i}` : String(i)));

function pad2(n: number): string {
  return TWO_DIGITS[n] as string;
}

/**
 * Formats epoch milliseconds as "YYYY-MM-DDTHH:MM:SSZ". Years outside 0000–9999 fall back to
 * Date's expanded form ("+010000-01-01T00:00:00Z"); outside Date's range it throws.
 * @example formatIsoSeconds(Date.UTC(2026, 1, 9, 12)) === "2026-02-09T12:00:00Z"
 */
export function formatIsoSeconds(ms: number, field = 'time'): string {
  if (!(Math.abs(ms) <= MAX_TIME_MS))
    throw new ValidationError(field, 'epoch milliseconds within ±8.64e15', ms);
  const whole = Math.floor(ms / 1000) * 1000;
  if (whole < FOUR_DIGIT_MIN_MS || whole > FOUR_DIGIT_MAX_MS)
    return `${new Date(whole).toISOString().slice(0, -5)}Z`;

  const days = Math.floor(whole / MS_PER_DAY);
  let secondOfDay = (whole - days * MS_PER_DAY) / 1000;
  const hours = Math.floor(secondOfDay / 3600);
  secondOfDay -= hours * 3600;
  const minutes = Math.floor(secondOfDay / 60);
  const seconds = secondOfDay - minutes * 60;

  // civil_from_days: shift the epoch to 0000-03-01 so leap days fall at the end of a 400-year era.
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra -
      Math.floor(dayOfEra / 1460) +
      Math.floor(dayOfEra / 36_524) -
      Math.floor(dayOfEra / 146_096)) /
      365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthFromMarch = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthFromMarch + 2) / 5) + 1;
  const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);

  return `${pad2(Math.floor(year / 100))}${pad2(year % 100)}-${pad2(month)}-${pad2(day)}T${pad2(hours)}:${pad2(minutes)}:${pad2(seconds)}Z`;
}
