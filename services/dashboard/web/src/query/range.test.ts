import { describe, expect, it } from 'vitest';
import {
  addDays,
  defaultInterval,
  formatRange,
  intervalsFor,
  isDay,
  rangeDays,
  resolveRange,
} from './range.ts';

describe('date ranges in the project time zone', () => {
  const today = '2025-03-12';

  it('resolves each preset from the project’s today, today included', () => {
    expect(resolveRange('today', today)).toEqual({ from: '2025-03-12', to: '2025-03-12' });
    expect(resolveRange('7d', today)).toEqual({ from: '2025-03-06', to: '2025-03-12' });
    expect(resolveRange('30d', today)).toEqual({ from: '2025-02-11', to: '2025-03-12' });
    expect(resolveRange('90d', today)).toEqual({ from: '2024-12-13', to: '2025-03-12' });
    expect(resolveRange('mtd', today)).toEqual({ from: '2025-03-01', to: '2025-03-12' });
    expect(resolveRange('lastmonth', today)).toEqual({ from: '2025-02-01', to: '2025-02-28' });
    expect(resolveRange('lastmonth', '2024-03-31')).toEqual({ from: '2024-02-01', to: '2024-02-29' });
    expect(resolveRange('lastmonth', '2025-01-15')).toEqual({ from: '2024-12-01', to: '2024-12-31' });
    expect(rangeDays(resolveRange('90d', today))).toBe(90);
  });

  it('takes a custom range as given, reversed ones turned round, invalid days replaced, at most 731 days', () => {
    expect(resolveRange('custom', today, { from: '2025-01-05', to: '2025-01-20' })).toEqual({
      from: '2025-01-05',
      to: '2025-01-20',
    });
    expect(resolveRange('custom', today, { from: '2025-01-20', to: '2025-01-05' })).toEqual({
      from: '2025-01-05',
      to: '2025-01-20',
    });
    expect(resolveRange('custom', today, { from: '2025-02-30', to: 'x' })).toEqual(
      resolveRange('30d', today),
    );
    expect(rangeDays(resolveRange('custom', today, { from: '2010-01-01', to: today }))).toBe(731);
  });

  it('knows real days, across month and leap-year ends', () => {
    expect(isDay('2024-02-29')).toBe(true);
    expect(isDay('2025-02-29')).toBe(false);
    expect(isDay('2025-3-1')).toBe(false);
    expect(addDays('2024-12-31', 1)).toBe('2025-01-01');
    expect(addDays('2025-03-01', -1)).toBe('2025-02-28');
  });

  it('offers hours only for a month or less, and picks a sensible default', () => {
    expect(intervalsFor({ from: today, to: today })).toEqual(['hour', 'day']);
    expect(intervalsFor(resolveRange('30d', today))).toEqual(['hour', 'day', 'week']);
    expect(intervalsFor(resolveRange('90d', today))).toEqual(['day', 'week', 'month']);
    expect(defaultInterval({ from: today, to: today })).toBe('hour');
    expect(defaultInterval(resolveRange('30d', today))).toBe('day');
    expect(defaultInterval({ from: '2023-01-01', to: '2024-12-31' })).toBe('month');
  });

  it('reads ranges in short form', () => {
    expect(formatRange({ from: '2025-03-12', to: '2025-03-12' })).toBe('12 Mar 2025');
    expect(formatRange({ from: '2025-03-01', to: '2025-03-12' })).toBe('1–12 Mar 2025');
    expect(formatRange({ from: '2025-02-11', to: '2025-03-12' })).toBe('11 Feb – 12 Mar 2025');
    expect(formatRange({ from: '2024-12-13', to: '2025-03-12' })).toBe('13 Dec 2024 – 12 Mar 2025');
  });
});
