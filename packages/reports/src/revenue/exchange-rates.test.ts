// Operator-loaded exchange rates: the rates file's format and its refusals, the exact conversion (half to
// even at the micro-unit) on a worked example, rates stored in and read back from real chDB (a reload
// replaces a rate), and converted reports that list the rates they used and the currencies left out.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toMicros } from '@tally/contract';
import { migrate, openChdbWarehouse, type Warehouse } from '@tally/warehouse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dailyRevenue } from './daily.ts';
import {
  convertDaily,
  convertMicros,
  convertMonthly,
  ExchangeRateFileError,
  loadExchangeRates,
  parseExchangeRatesCsv,
  RateTable,
  rateTableFor,
  readExchangeRates,
} from './exchange-rates.ts';
import type { MrrInput } from './ledger.ts';
import { monthlyRevenue } from './monthly.ts';
import { RevenueQueryError } from './scope.ts';

const input = (currency: string, amount: string, date: string, customer = 'A'): MrrInput => ({
  transaction_id: `${currency}-${date}-${customer}`,
  customer_id: customer,
  customer_subscription_id: '',
  event_type: 'subscription',
  currency,
  amount: toMicros(amount),
  mrr_impact: toMicros(amount),
  is_recurring: true,
  interval: '',
  timestamp: Date.parse(`${date}T10:00:00Z`),
  received_at: Date.parse(`${date}T10:00:01Z`),
});

describe('parseExchangeRatesCsv', () => {
  it('reads monthly and daily files, normalising rates', () => {
    expect(
      parseExchangeRatesCsv('# ECB\nmonth,currency,rate_to_EUR\n2026-01,usd,0.9200\n\n2026-01,GBP,1.17\n'),
    ).toEqual([
      { base: 'EUR', currency: 'USD', period: '2026-01', rate: '0.92' },
      { base: 'EUR', currency: 'GBP', period: '2026-01', rate: '1.17' },
    ]);
    expect(parseExchangeRatesCsv('date,currency,rate_to_usd\r\n2026-02-28,JPY,0.006634\r\n')).toEqual([
      { base: 'USD', currency: 'JPY', period: '2026-02-28', rate: '0.006634' },
    ]);
  });

  it.each([
    ['', /empty/],
    ['month,currency,rate\n2026-01,USD,1', /header/],
    ['month,currency,rate_to_EUR\n2026-13,USD,1', /line 2: month must be YYYY-MM/],
    ['date,currency,rate_to_EUR\n2026-02-30,USD,1', /line 2: not a real date/],
    ['month,currency,rate_to_EUR\n2026-01,US,1', /three-letter/],
    ['month,currency,rate_to_EUR\n2026-01,USD,-1', /positive decimal/],
    ['month,currency,rate_to_EUR\n2026-01,USD,0', /positive decimal/],
    ['month,currency,rate_to_EUR\n2026-01,USD,1e3', /positive decimal/],
    ['month,currency,rate_to_EUR\n2026-01,USD,0.1234567890123', /at most 12 decimals/],
    ['month,currency,rate_to_EUR\n2026-01,EUR,1', /to itself/],
    ['month,currency,rate_to_EUR\n2026-01,USD,1\n2026-01,USD,2', /line 3: USD 2026-01 appears twice/],
    ['month,currency,rate_to_EUR\n2026-01,USD', /3 columns/],
    ['month,currency,rate_to_EUR\n', /no rates/],
  ])('refuses %j', (text, message) => {
    expect(() => parseExchangeRatesCsv(text)).toThrow(ExchangeRateFileError);
    expect(() => parseExchangeRatesCsv(text)).toThrow(message);
  });
});

describe('convertMicros', () => {
  it('multiplies exactly and rounds half to even at the micro-unit', () => {
    // 49.99 USD at 0.9215 = 46.065785 exactly.
    expect(convertMicros(toMicros('49.99'), '0.9215')).toBe(toMicros('46.065785'));
    // 0.000001 × 0.5 = 0.0000005: half, to even (0); 0.000003 × 0.5 = 0.0000015: half, to even (0.000002).
    expect(convertMicros(1n, '0.5')).toBe(0n);
    expect(convertMicros(3n, '0.5')).toBe(2n);
    expect(convertMicros(-3n, '0.5')).toBe(-2n);
    expect(convertMicros(5n, '0.3')).toBe(2n); // 1.5 micro → 2
    expect(convertMicros(1n, '0.500000000001')).toBe(1n); // just above half
    // Far beyond a double's precision: 999,999,999,999,999.999999 × 1.123456789012.
    // = 1123456789011999.999998876543210988, rounded up at the seventh decimal.
    expect(convertMicros(toMicros('999999999999999.999999'), '1.123456789012')).toBe(
      1_123_456_789_011_999_999_999n,
    );
  });
});

describe('RateTable', () => {
  const table = new RateTable('EUR', [
    { base: 'EUR', currency: 'USD', period: '2026-01', rate: '0.9' },
    { base: 'EUR', currency: 'USD', period: '2026-01-15', rate: '0.95' },
    { base: 'EUR', currency: 'GBP', period: '2026-02-10', rate: '1.1' },
    { base: 'EUR', currency: 'GBP', period: '2026-02-20', rate: '1.2' },
    { base: 'USD', currency: 'GBP', period: '2026-01', rate: '1.3' },
  ]);
  it("takes a day's rate, else its month's; a month's rate, else its last day's", () => {
    expect(table.rateFor('USD', '2026-01-15')).toEqual({
      currency: 'USD',
      period: '2026-01-15',
      rate: '0.95',
    });
    expect(table.rateFor('USD', '2026-01-16')).toEqual({ currency: 'USD', period: '2026-01', rate: '0.9' });
    expect(table.rateFor('USD', '2026-01')).toEqual({ currency: 'USD', period: '2026-01', rate: '0.9' });
    expect(table.rateFor('GBP', '2026-02')).toEqual({ currency: 'GBP', period: '2026-02-20', rate: '1.2' });
    expect(table.rateFor('GBP', '2026-01')).toBeNull(); // the USD-based rate is not a EUR rate
    expect(table.rateFor('USD', '2026-02-01')).toBeNull();
    expect(table.rateFor('EUR', '2026-07')).toEqual({ currency: 'EUR', period: '2026-07', rate: '1' });
  });
});

describe('exchange rates on chDB', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tally-exchange-rates-'));
  let warehouse: Warehouse;
  beforeAll(async () => {
    warehouse = await openChdbWarehouse({ dataDir: join(dir, 'warehouse'), database: 'tally' });
    await migrate(warehouse);
  }, 60_000);
  afterAll(async () => {
    await warehouse?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses convert_to without rates to that currency (a 400)', async () => {
    await expect(rateTableFor(warehouse, 'EUR')).rejects.toThrow(RevenueQueryError);
    await expect(rateTableFor(warehouse, 'EUR')).rejects.toThrow(/no exchange rates/);
    await expect(rateTableFor(warehouse, 'EURO')).rejects.toThrow(/three-letter/);
  });

  it('stores rates, replaces a reloaded one, and converts the worked example exactly', async () => {
    await loadExchangeRates(
      warehouse,
      parseExchangeRatesCsv(
        'month,currency,rate_to_EUR\n2026-01,USD,0.9\n2026-02,USD,0.9215\n2026-01,GBP,1.17\n',
      ),
    );
    // A corrected rate for February, loaded later, wins.
    await loadExchangeRates(
      warehouse,
      parseExchangeRatesCsv('month,currency,rate_to_EUR\n2026-02,USD,0.9216\n'),
    );
    expect(await readExchangeRates(warehouse, 'EUR')).toEqual([
      { base: 'EUR', currency: 'GBP', period: '2026-01', rate: '1.17' },
      { base: 'EUR', currency: 'USD', period: '2026-01', rate: '0.9' },
      { base: 'EUR', currency: 'USD', period: '2026-02', rate: '0.9216' },
    ]);
    const table = await rateTableFor(warehouse, 'eur');
    // January: 49.99 USD, 20.005 GBP and 10 EUR of MRR; February: the same USD, the GBP customer has no
    // February rate and is left out (listed), a new 0.000001 EUR.
    const records = [
      input('USD', '49.99', '2026-01-03'),
      input('GBP', '20.005', '2026-01-04', 'B'),
      input('EUR', '10', '2026-01-05', 'C'),
      input('EUR', '0.000001', '2026-02-02', 'D'),
    ];
    const [january, february] = convertMonthly(monthlyRevenue(records, '2026-01', '2026-02'), table);
    // 49.99 × 0.9 = 44.991; 20.005 × 1.17 = 23.40585; + 10 = 78.39685.
    expect(january).toMatchObject({
      month: '2026-01',
      currency: 'EUR',
      converted_to: 'EUR',
      mrr_start: '0',
      new: '78.39685',
      mrr_end: '78.39685',
      cash_revenue: '78.39685',
      missing_currencies: [],
    });
    expect(january?.rates).toEqual([
      { currency: 'GBP', period: '2026-01', rate: '1.17' },
      { currency: 'USD', period: '2026-01', rate: '0.9' },
    ]);
    // 49.99 × 0.9216 = 46.070784; EUR 10.000001; GBP has no rate for February: left out, listed.
    expect(february).toMatchObject({
      month: '2026-02',
      mrr_start: '56.070784',
      mrr_end: '56.070785',
      new: '0.000001',
      missing_currencies: ['GBP'],
      rates: [{ currency: 'USD', period: '2026-02', rate: '0.9216' }],
    });
    // Daily: a day takes its month's rate.
    const days = convertDaily(dailyRevenue(records, '2026-01-30', '2026-02-02'), table);
    expect(days.map((d) => [d.date, d.mrr, d.missing_currencies])).toEqual([
      ['2026-01-30', '78.39685', []],
      ['2026-01-31', '78.39685', []],
      ['2026-02-01', '56.070784', ['GBP']],
      ['2026-02-02', '56.070785', ['GBP']],
    ]);
    expect(days[0]?.arr).toBe('940.7622');
  });
});
