// Handlers are typed from the operation table: a request's params, query string and body have the types
// of the operation's TypeBox schemas, so no handler casts them. Checked by the type checker (tsc -p
// tsconfig.json runs over the tests); the assertions below are also run, and hold at runtime trivially.
import type { BreakdownDimension } from '@tally/reports/traffic';
import { describe, expectTypeOf, it } from 'vitest';
import type { RequestOf } from './route.ts';

describe('RequestOf', () => {
  it('types params from the operation’s schema', () => {
    expectTypeOf<RequestOf<'trafficBreakdown'>['Params']>().toEqualTypeOf<{
      project: string;
      dimension: BreakdownDimension;
    }>();
    expectTypeOf<RequestOf<'revenueCustomer'>['Params']>().toEqualTypeOf<{
      project: string;
      customer_id: string;
    }>();
  });

  it('types the query string, optional parameters optional', () => {
    expectTypeOf<RequestOf<'trafficSummary'>['Querystring']['compare']>().toEqualTypeOf<
      'previous' | 'year' | 'none' | undefined
    >();
    expectTypeOf<RequestOf<'revenueRecords'>['Querystring']['limit']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<RequestOf<'revenueMrr'>['Querystring']['from']>().toEqualTypeOf<string>();
  });

  it('types the body, and gives none to an operation without one', () => {
    expectTypeOf<RequestOf<'signIn'>['Body']>().toHaveProperty('email').toEqualTypeOf<string>();
    expectTypeOf<RequestOf<'trafficSummary'>['Body']>().toEqualTypeOf<undefined>();
    expectTypeOf<RequestOf<'listProjects'>['Params']>().toEqualTypeOf<Record<string, never>>();
  });
});
