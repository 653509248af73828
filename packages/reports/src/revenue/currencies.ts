// The currencies a project's revenue is in (GET …/revenue/currencies, `tally report revenue/currencies`): each
// with how many revenue records and customers it has, the most used first. The dashboard's currency pickers
// list them, since money is never added across currencies and a reader has to choose one.
import type { Warehouse } from '@tally/warehouse';

export interface RevenueCurrency {
  /** The three-letter code as the records carry it. */
  currency: string;
  records: number;
  customers: number;
}

export interface RevenueCurrencies {
  currencies: RevenueCurrency[];
}

export interface RevenueCurrenciesQuery {
  project: string;
}

export async function revenueCurrenciesReport(
  warehouse: Warehouse,
  query: RevenueCurrenciesQuery,
): Promise<RevenueCurrencies> {
  const rows = await warehouse.query<{
    currency: string;
    records: number | string;
    customers: number | string;
  }>(
    `SELECT currency, count() AS records, uniqExact(customer_id) AS customers
     FROM revenue_records
     WHERE project_id = {project:String}
     GROUP BY currency
     ORDER BY records DESC, currency`,
    { project: query.project },
  );
  return {
    currencies: rows.map((r) => ({
      currency: r.currency,
      records: Number(r.records),
      customers: Number(r.customers),
    })),
  };
}
