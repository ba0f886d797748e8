/** `baton parse-time <expr>`: what a delivery time expression means, without running anything. */
import { DateTime, SystemZone } from 'luxon';
import { BatonError } from '../core/index.ts';
import { humanizeDuration, parseSchedule } from '../schedule/index.ts';
import { systemClock } from '../time/index.ts';

export async function parseTimeCommand(
  expression: string,
  options: { tz?: string; now?: string; lang?: string; json?: boolean },
): Promise<number> {
  let now = systemClock.now();
  if (options.now !== undefined) {
    // Without an offset, --now is a wall-clock time in --tz (not in the process's TZ, which
    // Date.parse would use): the answer must not depend on the machine it is asked on.
    const zone = options.tz ?? SystemZone.instance.name;
    const at = DateTime.fromISO(options.now.trim(), { zone, setZone: true });
    if (!at.isValid)
      throw new BatonError(
        'INVALID_INPUT',
        `--now must be an ISO 8601 time like 2026-03-05T14:30:00+08:00, got "${options.now}"`,
      );
    now = at.toMillis();
  }
  if (options.lang !== undefined && options.lang !== 'en' && options.lang !== 'zh')
    throw new BatonError('INVALID_INPUT', `--lang must be "en" or "zh", got "${options.lang}"`);
  const parsed = parseSchedule(expression, {
    now,
    ...(options.tz !== undefined ? { timezone: options.tz } : {}),
    // --lang is the language the expression is written in: it picks the grammar, not only the label.
    ...(options.lang !== undefined
      ? { language: options.lang as 'en' | 'zh', grammar: options.lang as 'en' | 'zh' }
      : {}),
  });
  if (options.json) {
    process.stdout.write(
      `${JSON.stringify({ at: parsed.iso, atMs: parsed.at, delayMs: parsed.delayMs, language: parsed.language, timezone: parsed.timezone, kind: parsed.kind, past: parsed.past })}\n`,
    );
    return 0;
  }
  const when =
    parsed.delayMs === 0
      ? parsed.past
        ? 'already past: deliver at once'
        : 'now'
      : `in ${humanizeDuration(parsed.delayMs, 'en')}`;
  process.stdout.write(`${parsed.iso}  (${when}; ${parsed.language}, ${parsed.timezone}, ${parsed.kind})\n`);
  return 0;
}
