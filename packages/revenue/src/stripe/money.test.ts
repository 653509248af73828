// fromMinorUnits: Stripe minor units to major units by currency, rounded to the currency's decimals.
import { describe, expect, it } from 'vitest';
import { fromMinorUnits } from './money.ts';

describe('fromMinorUnits', () => {
  it('divides by the currency minor unit', () => {
    expect(fromMinorUnits(4999, 'usd')).toBe(49.99);
    expect(fromMinorUnits(-1225, 'eur')).toBe(-12.25);
    expect(fromMinorUnits(500, 'jpy')).toBe(500);
    expect(fromMinorUnits(1230, 'kwd')).toBe(1.23);
    expect(fromMinorUnits(1234, 'KWD')).toBe(1.234);
  });

  it('rounds a monthly share of a price to the currency’s decimals', () => {
    expect(fromMinorUnits(19600 / 12, 'eur')).toBe(16.33);
    expect(fromMinorUnits((100 * 365) / 12, 'usd')).toBe(30.42); // a daily price of 1 USD
    expect(fromMinorUnits(1000 / 12, 'jpy')).toBe(83);
    expect(fromMinorUnits(1000 / 3, 'kwd')).toBe(0.333);
  });

  it('never gives −0', () => {
    expect(Object.is(fromMinorUnits(-0, 'usd'), 0)).toBe(true);
    expect(Object.is(fromMinorUnits(-0.1, 'usd'), 0)).toBe(true);
  });
});
