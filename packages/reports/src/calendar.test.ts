// The reports' calendar on its own: which texts are days and months, the instants they start at in UTC,
// stepping by days and months across month, year and leap-day edges (and on random days, fast-check), and
// a day in a time zone either side of the date line.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addDays,
  addMonths,
  DAY_MS,
  dayNumber,
  dayOf,
  isDayText,
  isMonth,
  monthSpan,
  monthStart,
  monthsBetween,
  parseUtcDay,
  todayIn,
  utcDayEnd,
  utcDayOf,
  utcDayStart,
  utcMonthOf,
  yearBefore,
} from './calendar.ts';

describe('days', () => {
  it('starts a real day at midnight UTC and refuses what is not one with NaN', () => {
    expect(utcDayStart('2026-03-10')).toBe(Date.UTC(2026, 2, 10));
    expect(utcDayStart('2024-02-29')).toBe(Date.UTC(2024, 1, 29));
    expect(utcDayEnd('2026-12-31')).toBe(Date.UTC(2027, 0, 1));
    for (const day of ['2025-02-29', '2026-02-30', '2026-04-31', '2026-13-01', '2026-00-10', '2026-3-10', ''])
      expect(utcDayStart(day), day).toBeNaN();
    expect(dayNumber('2026-02-30')).toBeNaN();
  });

  it("reads a day as Date.parse does: past the month's end it runs on, past 31 it has no reading", () => {
    expect(parseUtcDay('2026-02-30')).toBe(Date.UTC(2026, 2, 2));
    expect(parseUtcDay('2026-02-32')).toBeNaN();
    expect(parseUtcDay('2026-3-10')).toBeNaN();
    expect(isDayText('2026-13-45')).toBe(true);
    expect(isDayText('2026-3-1')).toBe(false);
  });

  it('steps by days across months, years and leap days', () => {
    expect(dayNumber('1970-01-01')).toBe(0);
    expect(dayOf(1)).toBe('1970-01-02');
    expect(addDays('2024-02-28', 1)).toBe('2024-02-29');
    expect(addDays('2026-03-01', -1)).toBe('2026-02-28');
    expect(addDays('2026-12-31', 1)).toBe('2027-01-01');
    expect(() => addDays('2026-02-30', 1)).toThrow(RangeError);
    expect(utcDayOf(Date.UTC(2026, 2, 10, 23, 59, 59, 999))).toBe('2026-03-10');
  });

  it('takes the same day a year earlier, 29 February as the 28th', () => {
    expect(yearBefore('2026-03-10')).toBe('2025-03-10');
    expect(yearBefore('2024-02-29')).toBe('2023-02-28');
    expect(yearBefore('2025-02-28')).toBe('2024-02-28');
  });

  it('reads back every day it writes, and steps as the instants do (fast-check)', () => {
    fc.assert(
      fc.property(fc.integer({ min: -25_000, max: 80_000 }), fc.integer({ min: -800, max: 800 }), (n, k) => {
        const day = dayOf(n);
        expect(dayNumber(day)).toBe(n);
        expect(utcDayStart(day)).toBe(n * DAY_MS);
        expect(addDays(day, k)).toBe(dayOf(n + k));
        expect(utcDayOf(utcDayEnd(day) - 1)).toBe(day);
      }),
    );
  });
});

describe('months', () => {
  it('starts a month at midnight UTC of its first day, offset by months, and refuses what is not one', () => {
    expect(monthStart('2026-01')).toBe(Date.UTC(2026, 0, 1));
    expect(monthStart('2026-01', -1)).toBe(Date.UTC(2025, 11, 1));
    expect(monthStart('2026-12', 1)).toBe(Date.UTC(2027, 0, 1));
    expect(() => monthStart('2026-13')).toThrow(RangeError);
    expect(isMonth('2026-00')).toBe(false);
    expect(isMonth('2026-07')).toBe(true);
    expect(utcMonthOf(Date.UTC(2026, 0, 31, 23))).toBe('2026-01');
  });

  it('steps, counts and lists months across years', () => {
    expect(addMonths('2026-01', -11)).toBe('2025-02');
    expect(addMonths('2025-12', 1)).toBe('2026-01');
    expect(monthSpan('2025-11', '2026-02')).toBe(4);
    expect(monthSpan('2026-02', '2026-01')).toBe(0);
    expect(monthsBetween('2025-11', '2026-02')).toEqual(['2025-11', '2025-12', '2026-01', '2026-02']);
    expect(() => monthsBetween('1900-01', '2026-01')).toThrow(RangeError);
  });

  it('counts as many months as it lists (fast-check)', () => {
    const month = fc
      .tuple(fc.integer({ min: 1970, max: 2100 }), fc.integer({ min: 1, max: 12 }))
      .map(([y, m]) => `${y}-${String(m).padStart(2, '0')}`);
    fc.assert(
      fc.property(month, fc.integer({ min: 0, max: 240 }), (from, k) => {
        const to = addMonths(from, k);
        expect(monthSpan(from, to)).toBe(k + 1);
        expect(monthsBetween(from, to)).toHaveLength(k + 1);
        expect(monthsBetween(from, to).at(-1)).toBe(to);
      }),
    );
  });
});

describe('a day in a time zone', () => {
  it("is the zone's own date, either side of the date line", () => {
    const instant = Date.UTC(2026, 0, 1, 11);
    expect(todayIn('UTC', instant)).toBe('2026-01-01');
    expect(todayIn('Pacific/Kiritimati', instant)).toBe('2026-01-02');
    expect(todayIn('Pacific/Pago_Pago', instant)).toBe('2026-01-01');
    expect(todayIn('Pacific/Pago_Pago', Date.UTC(2026, 0, 1, 10))).toBe('2025-12-31');
  });
});
