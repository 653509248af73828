// Money on the wire and in the warehouse. A JSON number is an IEEE double, and the warehouse keeps money as
// Decimal(38, 6): a number is accepted as money only when the decimal it stands for is exact in both, that
// is when its shortest decimal form has at most 6 decimal places and at most 15 significant digits (every
// decimal of 15 significant digits survives the trip through a double unchanged). Such a value is stored
// exactly as sent, and every sum over it is done in integer micro-units (BigInt), so no total can round or
// overflow, and no text written for the warehouse can hold an exponent.

/** Decimal places money keeps (the warehouse's Decimal scale). */
export const MONEY_DECIMALS = 6;
/** Significant digits a double carries exactly. */
export const MONEY_SIGNIFICANT_DIGITS = 15;
/** Largest magnitude of a money value: 15 digits before the point. */
export const MAX_MONEY = 999_999_999_999_999;
/** Micro-units per unit. */
export const MICROS = 1_000_000n;

/** The digits of a finite number's shortest decimal form: sign, digits without the point, and the exponent. */
function decimalParts(value: number): { negative: boolean; digits: string; exponent: number } {
  // toExponential() without an argument gives as many digits as needed to tell the double apart: the
  // shortest round-trip form, like String(), but always as d.ddde±x.
  const [mantissa = '0', exp = '0'] = Math.abs(value).toExponential().split('e');
  const digits = mantissa.replace('.', '').replace(/0+$/, '') || '0';
  return { negative: value < 0, digits, exponent: Number(exp) };
}

/**
 * Whether `value` is money Tally stores exactly: at most 6 decimal places and 15 significant digits, and
 * at most MAX_MONEY in magnitude (so that sums over a project's history stay far inside Decimal(38, 6)).
 */
export function isExactMoney(value: unknown): value is number {
  if (typeof value !== 'number' || !(Math.abs(value) <= MAX_MONEY)) return false;
  if (value === 0) return true;
  const { digits, exponent } = decimalParts(value);
  const decimals = Math.max(0, digits.length - 1 - exponent);
  return digits.length <= MONEY_SIGNIFICANT_DIGITS && decimals <= MONEY_DECIMALS;
}

/** The exact decimal text of money (no exponent, no trailing zeros): 49, 49.5, -0.000001. */
export function moneyText(value: number): string {
  if (!isExactMoney(value)) throw new RangeError('not an exact money value');
  return formatMicros(toMicros(value));
}

/**
 * Money as integer micro-units. Takes an exact money number, or a decimal text such as the warehouse
 * returns (toString of a Decimal: "-12.5", "100", "0.000001"); more than 6 decimal places is an error.
 */
export function toMicros(value: number | string): bigint {
  if (typeof value === 'number') {
    if (!isExactMoney(value)) throw new RangeError('not an exact money value');
    if (value === 0) return 0n;
    const { negative, digits, exponent } = decimalParts(value);
    // value = 0.digits × 10^(exponent + 1); in micro-units the point moves 6 places right.
    const shift = exponent + MONEY_DECIMALS - (digits.length - 1);
    const micros = BigInt(digits) * 10n ** BigInt(shift);
    return negative ? -micros : micros;
  }
  const match = /^([-+]?)(\d+)(?:\.(\d*))?$/.exec(value.trim());
  if (!match) throw new RangeError(`not a decimal: "${value}"`);
  const [, sign, whole = '0', fraction = ''] = match;
  if (fraction.replace(/0+$/, '').length > MONEY_DECIMALS) {
    throw new RangeError(`more than ${MONEY_DECIMALS} decimal places: "${value}"`);
  }
  const micros =
    BigInt(whole) * MICROS + BigInt(fraction.slice(0, MONEY_DECIMALS).padEnd(MONEY_DECIMALS, '0'));
  return sign === '-' ? -micros : micros;
}

/** Exact decimal text of micro-units, without trailing zeros: 49, 49.5, -0.000001. Never an exponent. */
export function formatMicros(micros: bigint): string {
  const negative = micros < 0n;
  const abs = negative ? -micros : micros;
  const whole = abs / MICROS;
  const fraction = (abs % MICROS).toString().padStart(MONEY_DECIMALS, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** a / b rounded to the nearest integer, halves away from zero (for micro-units: to the micro-unit). */
export function divideRounded(a: bigint, b: bigint): bigint {
  if (b === 0n) throw new RangeError('division by zero');
  const negative = a < 0n !== b < 0n;
  const absA = a < 0n ? -a : a;
  const absB = b < 0n ? -b : b;
  const quotient = (2n * absA + absB) / (2n * absB);
  return negative ? -quotient : quotient;
}
