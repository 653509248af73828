// The filter syntax and the calendar of the dashboard's queries, without a warehouse: parsing (escapes,
// alternatives, errors that never quote the input), the parameters filters become (values never enter SQL
// text), comparison periods, and the buckets of a range in a time zone across daylight-saving changes.
import { describe, expect, it } from 'vitest';
import { isTimeZone, todayIn } from '../calendar.ts';
import { FilterSyntaxError, filterCondition, parseFilters } from './filters.ts';
import { checkRange, comparisonRange } from './scope.ts';
import { bucketsOf } from './timeseries.ts';

describe('parseFilters', () => {
  it('reads dimensions, operators, alternatives and escapes', () => {
    expect(parseFilters('channel==Organic Search|Email;page==/blog/*;country!=US;prop:plan~=pro')).toEqual([
      { dimension: 'channel', operator: '==', values: ['Organic Search', 'Email'] },
      { dimension: 'page', operator: '==', values: ['/blog/*'] },
      { dimension: 'country', operator: '!=', values: ['US'] },
      { dimension: 'prop:plan', operator: '~=', values: ['pro'] },
    ]);
    expect(parseFilters('utm_campaign==a\\;b|c\\|d|e\\\\f')).toEqual([
      { dimension: 'utm_campaign', operator: '==', values: ['a;b', 'c|d', 'e\\f'] },
    ]);
    expect(parseFilters('page==/a==b')[0]?.values).toEqual(['/a==b']);
    expect(parseFilters('')).toEqual([]);
    expect(parseFilters(undefined)).toEqual([]);
  });

  it('refuses unknown dimensions and malformed filters without quoting them', () => {
    for (const bad of ['secret_dimension==x', 'page', 'page=x', 'PAGE==x']) {
      const error = (() => {
        try {
          parseFilters(bad);
        } catch (e) {
          return e as Error;
        }
        return null;
      })();
      expect(error, bad).toBeInstanceOf(FilterSyntaxError);
      expect(error?.message).not.toContain('secret');
    }
    expect(() => parseFilters(Array.from({ length: 21 }, () => 'os==x').join(';'))).toThrow(/at most 20/);
  });

  it('turns values into LIKE patterns passed as parameters, never into SQL text', () => {
    const { sql, params } = filterCondition(
      parseFilters("page==/blog/*|/a_b;source~=x') OR 1 = 1 \\; DROP TABLE events --;prop:plan!=pro"),
    );
    expect(sql).not.toContain('DROP');
    expect(params).toEqual({
      f0: ['/blog/%', '/a\\_b'],
      f1: ["%x') OR 1 = 1 ; DROP TABLE events --%"],
      f2: ['pro'],
      f2k: 'plan',
    });
    expect(sql).toMatch(
      /^arrayExists\(x -> .*pageview_paths\) AND .*source LIKE p.* AND NOT \(arrayExists\(d -> /,
    );
    expect(filterCondition([]).sql).toBe('1');
  });
});

describe('ranges', () => {
  it('compares with as many days before, or the same days a year earlier', () => {
    expect(comparisonRange('2026-05-01', '2026-05-31', 'previous')).toEqual({
      from: '2026-03-31',
      to: '2026-04-30',
    });
    expect(comparisonRange('2028-02-29', '2028-03-06', 'year')).toEqual({
      from: '2027-02-28',
      to: '2027-03-06',
    });
  });

  it('refuses backwards, unreal and too long ranges', () => {
    expect(() => checkRange('2026-05-02', '2026-05-01')).toThrow(/after/);
    expect(() => checkRange('2026-02-30', '2026-03-01')).toThrow(/real days/);
    expect(() => checkRange('2020-01-01', '2026-01-01')).toThrow(/at most 731/);
  });

  it('knows time zones and their today', () => {
    expect(isTimeZone('Europe/Berlin')).toBe(true);
    expect(isTimeZone('Mars/Olympus')).toBe(false);
    expect(isTimeZone("UTC'; DROP")).toBe(false);
    expect(todayIn('Pacific/Kiritimati', Date.parse('2026-05-04T12:00:00Z'))).toBe('2026-05-05');
  });
});

describe('buckets of a range', () => {
  it('has 23 hours on the day clocks go forward and 24 labels (one repeated hour) when they go back', () => {
    expect(bucketsOf('2026-03-29', '2026-03-29', 'hour', 'Europe/Berlin')).toHaveLength(23);
    const autumn = bucketsOf('2026-10-25', '2026-10-25', 'hour', 'Europe/Berlin');
    expect(autumn).toHaveLength(24);
    expect(autumn.slice(0, 4)).toEqual([
      '2026-10-25 00:00',
      '2026-10-25 01:00',
      '2026-10-25 02:00',
      '2026-10-25 03:00',
    ]);
    expect(bucketsOf('2026-05-04', '2026-05-04', 'hour', 'Asia/Kolkata')).toHaveLength(24);
  });

  it('starts weeks on Monday and months on the 1st, partial ones included', () => {
    expect(bucketsOf('2026-05-06', '2026-05-19', 'week', 'UTC')).toEqual([
      '2026-05-04',
      '2026-05-11',
      '2026-05-18',
    ]);
    expect(bucketsOf('2026-04-15', '2026-06-02', 'month', 'UTC')).toEqual([
      '2026-04-01',
      '2026-05-01',
      '2026-06-01',
    ]);
    expect(bucketsOf('2026-05-30', '2026-06-01', 'day', 'UTC')).toEqual([
      '2026-05-30',
      '2026-05-31',
      '2026-06-01',
    ]);
  });

  it('refuses hours over more than 31 days', () => {
    expect(() => bucketsOf('2026-01-01', '2026-03-01', 'hour', 'UTC')).toThrow(/31 days/);
  });
});
