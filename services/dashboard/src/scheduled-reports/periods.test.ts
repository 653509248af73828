// The report periods in a project's time zone: the weekly report of Monday to Sunday due from the next
// Monday 08:00 there, the monthly one from the first at 08:00, with a fixed clock.
import { describe, expect, it } from 'vitest';
import { dueReportPeriod } from './periods.ts';

const at = (iso: string) => Date.parse(iso);

describe('report periods', () => {
  it('make the weekly report of the week before due from Monday 08:00 in the time zone', () => {
    // Monday 2026-11-23 07:59 in Berlin (06:59 UTC): the week of 9-15 November is still the latest due.
    expect(dueReportPeriod('weekly', 'Europe/Berlin', at('2026-11-23T06:59:00Z'))).toEqual({
      kind: 'weekly',
      period: '2026-11-09',
      from: '2026-11-09',
      to: '2026-11-15',
    });
    // 08:00 in Berlin: the week of 16-22 November.
    expect(dueReportPeriod('weekly', 'Europe/Berlin', at('2026-11-23T07:00:00Z'))).toMatchObject({
      period: '2026-11-16',
      to: '2026-11-22',
    });
    // The same instant is still Sunday evening in Los Angeles.
    expect(dueReportPeriod('weekly', 'America/Los_Angeles', at('2026-11-23T07:00:00Z'))).toMatchObject({
      period: '2026-11-09',
    });
    // Any later day of the week keeps the same period due (a dashboard that was down on Monday).
    expect(dueReportPeriod('weekly', 'UTC', at('2026-11-29T23:59:00Z'))).toMatchObject({
      period: '2026-11-16',
    });
  });

  it('make the monthly report of the month before due from the first at 08:00', () => {
    expect(dueReportPeriod('monthly', 'Asia/Tokyo', at('2026-11-30T22:59:00Z'))).toEqual({
      kind: 'monthly',
      period: '2026-10',
      from: '2026-10-01',
      to: '2026-10-31',
    });
    expect(dueReportPeriod('monthly', 'Asia/Tokyo', at('2026-11-30T23:00:00Z'))).toEqual({
      kind: 'monthly',
      period: '2026-11',
      from: '2026-11-01',
      to: '2026-11-30',
    });
    expect(dueReportPeriod('monthly', 'UTC', at('2027-03-01T08:00:00Z'))).toMatchObject({
      from: '2027-02-01',
      to: '2027-02-28',
    });
  });
});
