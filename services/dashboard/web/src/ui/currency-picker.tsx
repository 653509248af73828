// The currency a revenue page shows, chosen among the project's (GET …/revenue/currencies: each with its
// customers, the most used first): money is never added across currencies, so a reader picks one. The
// current one stays listed even when the project has no revenue in it (the default, or a link's).
import type { Api } from '../api/client.ts';
import type { RevenueCurrencies } from '../api/types.ts';
import { useQuery } from '../api/use-query.ts';
import { formatCount } from '../format.ts';

export function CurrencyPicker(props: {
  api: Api;
  projectId: string;
  value: string;
  onChange(currency: string): void;
}) {
  const known = useQuery<RevenueCurrencies>(
    props.api,
    `/projects/${encodeURIComponent(props.projectId)}/revenue/currencies`,
    {},
  );
  const listed = known.data?.currencies ?? [];
  const options = listed.some((c) => c.currency === props.value)
    ? listed
    : [{ currency: props.value, records: 0, customers: 0 }, ...listed];
  return (
    <label class="field inline">
      <span class="field-label">Currency</span>
      <select
        id="currency"
        value={props.value}
        onChange={(e) => props.onChange((e.currentTarget as HTMLSelectElement).value)}
      >
        {options.map((c) => (
          <option key={c.currency} value={c.currency}>
            {c.currency} ({c.customers === 1 ? '1 customer' : `${formatCount(c.customers)} customers`})
          </option>
        ))}
      </select>
    </label>
  );
}
