import { describe, expect, it } from 'vitest';
import { bucketEnd, bucketState, splitSeries, zonedNow } from './buckets.ts';

describe('buckets against the clock, in the project time zone', () => {
  it('reads now on the wall clock of the project, not the browser', () => {
    const now = new Date('2026-03-12T23:30:00Z');
    expect(zonedNow('UTC', now)).toBe('2026-03-12 23:30');
    expect(zonedNow('Europe/Berlin', now)).toBe('2026-03-13 00:30');
    expect(zonedNow('America/Los_Angeles', now)).toBe('2026-03-12 16:30');
    expect(zonedNow('Not/A_Zone', now)).toBe('2026-03-12 23:30');
  });

  it('ends hours, days, weeks (on Monday, a cut first week too) and months', () => {
    expect(bucketEnd('2026-03-12 23:00', 'hour')).toBe('2026-03-13 00:00');
    expect(bucketEnd('2026-02-28', 'day')).toBe('2026-03-01 00:00');
    expect(bucketEnd('2026-03-09', 'week')).toBe('2026-03-16 00:00'); // a Monday
    expect(bucketEnd('2026-03-12', 'week')).toBe('2026-03-16 00:00'); // a Thursday: the range began then
    expect(bucketEnd('2026-12-01', 'month')).toBe('2027-01-01 00:00');
  });

  it('tells over, running and still to come', () => {
    const now = '2026-03-12 14:20';
    expect(bucketState('2026-03-12 13:00', 'hour', now)).toBe('complete');
    expect(bucketState('2026-03-12 14:00', 'hour', now)).toBe('current');
    expect(bucketState('2026-03-12 15:00', 'hour', now)).toBe('future');
    expect(bucketState('2026-03-11', 'day', now)).toBe('complete');
    expect(bucketState('2026-03-12', 'day', now)).toBe('current');
    expect(bucketState('2026-03-09', 'week', now)).toBe('current');
    expect(bucketState('2026-03-01', 'month', now)).toBe('current');
    expect(bucketState('2026-02-01', 'month', now)).toBe('complete');
  });

  it('draws today by hour up to now: past hours solid, this hour dashed, the rest not at all (null, not 0)', () => {
    const hours = Array.from({ length: 24 }, (_, h) => `2026-03-12 ${String(h).padStart(2, '0')}:00`);
    const figures = hours.map(() => 0);
    figures[13] = 5;
    figures[14] = 2;
    const split = splitSeries(hours, figures, 'hour', '2026-03-12 14:20');
    expect(split.current).toBe(14);
    expect(split.lastComplete).toBe(13);
    expect(split.future).toBe(9);
    expect(split.values.slice(12)).toEqual([0, 5, 2, null, null, null, null, null, null, null, null, null]);
    expect(split.complete.slice(12, 16)).toEqual([0, 5, null, null]);
    expect(split.partial.slice(12, 16)).toEqual([null, 5, 2, null]);
  });

  it('leaves a range that is over as it is', () => {
    const days = ['2026-03-01', '2026-03-02'];
    const split = splitSeries(days, [3, 4], 'day', '2026-03-12 14:20');
    expect(split).toMatchObject({ current: null, lastComplete: 1, future: 0, complete: [3, 4] });
    expect(split.partial).toEqual([null, null]);
  });
});
