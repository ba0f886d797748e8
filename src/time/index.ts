/** Time for Baton: the injected Clock, the manual clock for tests, and durations. */
export { type Clock, ManualClock, msUntilNextTimer, systemClock, type TimerHandle } from './clock.ts';
export { type Duration, formatDuration, MAX_DURATION_MS, parseDuration } from './duration.ts';
export { DEFAULT_LANE_SLICE_MS, Lane, loopLane, sliceBudget } from './lane.ts';
