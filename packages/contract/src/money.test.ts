// Money is exact: what passes isExactMoney is stored as the decimal it stands for, and arithmetic on it
// is integer micro-units.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { divideRounded, formatMicros, isExactMoney, MAX_MONEY, moneyText, toMicros } from './money.ts';

describe('money', () => {
  it('accepts what a double and Decimal(38, 6) both hold exactly', () => {
    for (const v of [0, -0, 1, 49.5, 0.000001, -12.25, MAX_MONEY, -MAX_MONEY, 999_999_999.999999, 1e14]) {
      expect(isExactMoney(v), String(v)).toBe(true);
    }
    for (const v of [0.0000004, 1e15, 1e21, 0.1 + 0.2, 1_234_567_890.123456, Number.NaN, Infinity, '1']) {
      expect(isExactMoney(v), String(v)).toBe(false);
    }
  });

  it('writes exact decimal text, never an exponent', () => {
    expect(moneyText(49)).toBe('49');
    expect(moneyText(49.5)).toBe('49.5');
    expect(moneyText(0.000001)).toBe('0.000001');
    expect(moneyText(-1e14)).toBe('-100000000000000');
    expect(formatMicros(10n ** 30n + 1n)).toBe('1000000000000000000000000.000001');
    expect(formatMicros(-5n)).toBe('-0.000005');
  });

  it('parses the warehouse decimal text exactly, and refuses finer values', () => {
    expect(toMicros('-12.5')).toBe(-12_500_000n);
    expect(toMicros('1080000000000000000000.489728')).toBe(1_080_000_000_000_000_000_000_489_728n);
    expect(toMicros('7.000000')).toBe(7_000_000n);
    expect(() => toMicros('0.0000001')).toThrow(RangeError);
    expect(() => toMicros('1e21')).toThrow(RangeError);
  });

  it('rounds a division to the nearest micro-unit, halves away from zero', () => {
    expect(divideRounded(100_000_000n, 12n)).toBe(8_333_333n);
    expect(divideRounded(5n, 2n)).toBe(3n);
    expect(divideRounded(-5n, 2n)).toBe(-3n);
  });

  it('round-trips every decimal of at most 15 significant digits and 6 places through a double', () => {
    const decimal = fc
      .tuple(fc.bigInt({ min: -(10n ** 15n) + 1n, max: 10n ** 15n - 1n }), fc.integer({ min: 0, max: 6 }))
      .map(([digits, places]) => {
        const text = formatMicros(digits * 10n ** BigInt(6 - places));
        return text;
      })
      .filter((text) => text.replace(/[-.]/g, '').replace(/^0+/, '').length <= 15);
    fc.assert(
      fc.property(decimal, (text) => {
        const value = Number(text);
        expect(isExactMoney(value)).toBe(true);
        expect(moneyText(value)).toBe(text);
        expect(toMicros(value)).toBe(toMicros(text));
      }),
    );
  });
});
