// Stripe amounts to record amounts: Stripe sends integers in the currency's minor unit (cents; yen for
// zero-decimal currencies) and lower-case currency codes; records carry major units and upper-case ISO codes.
// Every amount a mapper puts in a record goes through fromMinorUnits once, after any arithmetic in minor
// units, so it has at most three decimals and is stored exactly (MRR of an annual price is a twelfth, of a
// daily one 365/12 times: neither divides evenly, and the rounding here keeps the record within the contract).

/** Stripe's zero-decimal and three-decimal currencies; every other one has two decimals. */
const ZERO_DECIMAL = new Set('BIF CLP DJF GNF JPY KMF KRW MGA PYG RWF UGX VND VUV XAF XOF XPF'.split(' '));
const THREE_DECIMAL = new Set('BHD JOD KWD OMR TND'.split(' '));

/**
 * A Stripe amount in minor units as major units of its currency, rounded to the currency's decimals
 * (4999 USD → 49.99; 500 JPY → 500; 1633.33… EUR cents → 16.33).
 */
export function fromMinorUnits(amount: number, currency: string): number {
  const code = currency.toUpperCase();
  const decimals = ZERO_DECIMAL.has(code) ? 0 : THREE_DECIMAL.has(code) ? 3 : 2;
  // `+ 0` turns a rounded −0 into 0, which JSON would print as 0 anyway.
  return Number((amount / 10 ** decimals).toFixed(decimals)) + 0;
}
