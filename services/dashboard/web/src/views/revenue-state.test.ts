import { describe, expect, it } from 'vitest';
import {
  addMonths,
  lastDay,
  microsOf,
  moneyOfMicros,
  readRevenueState,
  revenueSearch,
  timesTwelve,
} from './revenue-state.ts';

describe('money as the revenue views show it', () => {
  it('computes exactly in micro-units (ARR, sums)', () => {
    expect(timesTwelve('96.666667')).toBe('1160.000004');
    expect(timesTwelve('290')).toBe('3480');
    expect(moneyOfMicros(microsOf('0.1') + microsOf('0.2'))).toBe('0.3');
    expect(moneyOfMicros(microsOf('-12.5'))).toBe('-12.5');
  });
});

describe('the revenue state in the URL', () => {
  it('defaults to the 12 months to this month, USD, first-touch channel', () => {
    expect(readRevenueState({}, '2026-11-24')).toEqual({
      from: '2025-12',
      to: '2026-11',
      currency: 'USD',
      by: 'channel',
      touch: 'first',
      month: '2026-11',
      filters: '',
      breakdown: 'plan',
      interval: 'month',
      convert: '',
      retention: 'logo_retention',
    });
    expect(revenueSearch(readRevenueState({}, '2026-11-24'), '2026-11-24')).toBe('');
  });

  it('keeps what was asked, refusing what is not a month or a choice', () => {
    const state = readRevenueState(
      {
        from: '2026-01',
        to: '2026-04',
        currency: 'eur',
        by: 'utm_campaign',
        touch: 'last',
        month: '2026-02',
        filters: 'plan==pro;metadata.team==a\\;b',
        breakdown: 'metadata.team',
        interval: 'day',
        convert: 'eur',
        retention: 'gross_mrr_retention',
      },
      '2026-11-24',
    );
    expect(state).toEqual({
      from: '2026-01',
      to: '2026-04',
      currency: 'EUR',
      by: 'utm_campaign',
      touch: 'last',
      month: '2026-02',
      filters: 'plan==pro;metadata.team==a\\;b',
      breakdown: 'metadata.team',
      interval: 'day',
      convert: 'EUR',
      retention: 'gross_mrr_retention',
    });
    expect(revenueSearch(state, '2026-11-24')).toBe(
      '?from=2026-01&to=2026-04&currency=EUR&by=utm_campaign&touch=last&filters=plan%3D%3Dpro%3Bmetadata.team%3D%3Da%5C%3Bb&breakdown=metadata.team&interval=day&convert=EUR&retention=gross_mrr_retention&month=2026-02',
    );
    expect(
      readRevenueState(
        {
          from: '2026-13',
          by: 'x',
          month: '2020-01',
          breakdown: 'Plan;x',
          interval: 'hour',
          convert: 'euro',
          retention: 'churn',
        },
        '2026-11-24',
      ),
    ).toMatchObject({
      from: '2025-12',
      by: 'channel',
      breakdown: 'plan',
      month: '2026-11',
      interval: 'month',
      convert: '',
      retention: 'logo_retention',
    });
  });

  it('walks months across years', () => {
    expect(addMonths('2026-01', -1)).toBe('2025-12');
    expect(lastDay('2026-02')).toBe('2026-02-28');
    expect(lastDay('2028-02')).toBe('2028-02-29');
  });
});
