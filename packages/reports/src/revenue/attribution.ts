import { convertedGroupFold } from './converted-groups.ts';
import type { Converted, RateTable } from './exchange-rates.ts';
import { kept } from './history.ts';
import type { MrrInput } from './ledger.ts';
import { type AttributionRow, groupFold } from './money.ts';
import { foldPeriod, type PeriodFold } from './period.ts';
import type { AttributionDimension, Touch } from './scope.ts';
import { attributionKey, type CustomerTouches } from './touches.ts';

export interface Attribution {
  from: string;
  to: string;
  currency: string;
  by: AttributionDimension;
  touch: Touch;
  rows: AttributionRow[];
  /** The unbroken figures: each column of `rows` adds up to it exactly. */
  total: Omit<AttributionRow, 'key'>;
}

/**
 * Movements, MRR at the end, paying customers and cash of months from…to, per group of the customers' touch.
 * The answer is shared (kept per fold and touches): callers must not change it.
 */
export function revenueAttribution(
  records: readonly MrrInput[],
  options: {
    from: string;
    to: string;
    currency: string;
    by: AttributionDimension;
    touch: Touch;
    touches: ReadonlyMap<string, CustomerTouches>;
  },
): Attribution {
  const fold = foldPeriod(records, options);
  // Kept per fold (shared while the cached history is unchanged) and touches map (likewise): a page asks
  // for the same grouping again and again.
  const answers = kept(
    kept(attributions, fold, () => new WeakMap()),
    options.touches,
    () => new Map(),
  );
  const key = `${options.by}|${options.touch}`;
  const found = answers.get(key);
  if (found) return found;
  const { rows, total } = groupFold(fold, (customer) =>
    attributionKey(options.touches.get(customer), options.by, options.touch),
  );
  const attribution: Attribution = {
    from: options.from,
    to: options.to,
    currency: options.currency,
    by: options.by,
    touch: options.touch,
    rows,
    total,
  };
  answers.set(key, attribution);
  return attribution;
}

const attributions = new WeakMap<PeriodFold, WeakMap<object, Map<string, Attribution>>>();

/** Attribution with every currency of `currencies` converted to `table`'s base (converted-groups.ts). */
export function convertedRevenueAttribution(
  records: readonly MrrInput[],
  options: {
    from: string;
    to: string;
    currencies: readonly string[];
    by: AttributionDimension;
    touch: Touch;
    touches: ReadonlyMap<string, CustomerTouches>;
    table: RateTable;
  },
): Attribution & Converted {
  const folds = options.currencies.map((currency) => foldPeriod(records, { ...options, currency }));
  const converted = convertedGroupFold(
    folds,
    (customer) => attributionKey(options.touches.get(customer), options.by, options.touch),
    options.table,
  );
  return {
    from: options.from,
    to: options.to,
    currency: options.table.base,
    by: options.by,
    touch: options.touch,
    ...converted,
  };
}
