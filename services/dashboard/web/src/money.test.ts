import { describe, expect, it } from 'vitest';
import { formatMoney, formatMoneyAxis, formatMoneyExact, formatMoneyShort } from './money.ts';

// The unit tests run in en-US (as the browser tests do); another locale moves the symbol and the separators.
describe('money as people read it', () => {
  it('rounds to the currency’s usual decimals, with its symbol', () => {
    expect(formatMoney('290', 'USD')).toBe('$290.00');
    expect(formatMoney('47.571429', 'USD')).toBe('$47.57'); // ARPA, as the API sends it
    expect(formatMoney('1344.827586', 'USD')).toBe('$1,344.83'); // MRR per 1,000 visitors
    expect(formatMoney('-12.5', 'EUR')).toBe('-€12.50');
    expect(formatMoney('205', 'JPY')).toBe('¥205');
    expect(formatMoney(null, 'USD')).toBe('—');
  });

  it('keeps every decimal where the exact value is asked for, even past a double’s precision', () => {
    expect(formatMoneyExact('96.666667', 'USD')).toBe('$96.666667');
    expect(formatMoneyExact('150', 'USD')).toBe('$150.00');
    expect(formatMoneyExact('0.000001', 'USD')).toBe('$0.000001');
    expect(formatMoneyExact('123456789012345.123456', 'USD')).toBe('$123,456,789,012,345.123456');
    expect(formatMoneyExact('205', 'JPY')).toBe('¥205');
  });

  it('is compact on cards past 10,000 and on chart axes', () => {
    expect(formatMoneyShort('3480', 'USD')).toBe('$3,480.00');
    expect(formatMoneyShort('12345', 'USD')).toBe('$12.3K');
    expect(formatMoneyShort('1234567', 'USD')).toBe('$1.23M');
    expect(formatMoneyAxis(0, 'USD')).toBe('$0');
    expect(formatMoneyAxis(1500, 'USD')).toBe('$1.5K');
    expect(formatMoneyAxis(2_000_000, 'EUR')).toBe('€2M');
  });

  it('shows a code the browser does not know as a code', () => {
    expect(formatMoney('290', 'XYZ')).toMatch(/^XYZ\s290\.00$/);
    expect(formatMoney('290', 'US')).toBe('290 US');
  });
});
