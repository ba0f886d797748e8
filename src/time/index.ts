/** Time for Baton: the injected Clock, the manual clock for tests, and durations. */
export { type Clock, ManualClock, systemClock, type TimerHandle } from './clock.ts';
export { type Duration, formatDuration, parseDuration } from './duration.ts';
