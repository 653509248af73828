// The app's copy of the read API's types (types.ts) is the service's own: each must equal the static type of
// the TypeBox schema the service validates and serialises with, so a field added, renamed or made nullable on
// one side fails the type check (`npm run typecheck` compiles this file) and this test.
import type { Static, TSchema } from '@sinclair/typebox';
import { describe, expectTypeOf, it } from 'vitest';
import type * as S from '../../../src/api/schemas.ts';
import type * as W from './types.ts';

type Of<T extends TSchema> = Static<T>;

describe("the web app's API types", () => {
  it('equal the service schemas', () => {
    expectTypeOf<W.PeriodSummary>().toEqualTypeOf<Of<typeof S.PeriodSummary>>();
    expectTypeOf<Omit<W.Summary, 'previous'>>().toEqualTypeOf<Omit<Of<typeof S.Summary>, 'previous'>>();
    expectTypeOf<W.TimeseriesPoint>().toEqualTypeOf<Of<typeof S.TimeseriesPoint>>();
    expectTypeOf<W.Interval>().toEqualTypeOf<Of<typeof S.Timeseries>['interval']>();
    expectTypeOf<W.BreakdownRow>().toEqualTypeOf<Of<typeof S.BreakdownRow>>();
    expectTypeOf<W.BreakdownDimension>().toEqualTypeOf<Of<typeof S.Breakdown>['dimension']>();
    expectTypeOf<W.Goal>().toEqualTypeOf<Of<typeof S.Goal>>();
    expectTypeOf<W.RevenueCurrencies>().toEqualTypeOf<Of<typeof S.RevenueCurrencies>>();
    expectTypeOf<W.RevenueCohorts>().toEqualTypeOf<Of<typeof S.RevenueCohorts>>();
    expectTypeOf<W.Funnel>().toEqualTypeOf<Of<typeof S.Funnel>>();
    expectTypeOf<W.GoalConversions>().toEqualTypeOf<Of<typeof S.GoalConversions>>();
    expectTypeOf<W.FunnelResult>().toEqualTypeOf<Of<typeof S.FunnelResult>>();
    expectTypeOf<W.Project>().toEqualTypeOf<Of<typeof S.Project>>();
    expectTypeOf<W.Install>().toEqualTypeOf<Of<typeof S.Install>>();
    expectTypeOf<W.ReportSubscription>().toEqualTypeOf<Of<typeof S.ReportSubscription>>();
    expectTypeOf<W.CreatedToken>().toEqualTypeOf<Of<typeof S.CreatedToken>>();
    expectTypeOf<W.SessionInfo>().toEqualTypeOf<Of<typeof S.SessionInfo>>();
    expectTypeOf<W.Member>().toEqualTypeOf<Of<typeof S.Member>>();
    expectTypeOf<W.Invitation>().toEqualTypeOf<Of<typeof S.Invitation>>();
    expectTypeOf<W.InvitationView>().toEqualTypeOf<Of<typeof S.InvitationView>>();
    expectTypeOf<Omit<W.InvitationCreated, 'invitation'>>().toEqualTypeOf<
      Omit<Of<typeof S.InvitationCreated>, 'invitation'>
    >();
    expectTypeOf<W.Share>().toEqualTypeOf<Of<typeof S.Share>>();
    expectTypeOf<W.SharedInfo>().toEqualTypeOf<Of<typeof S.SharedInfo>>();
    expectTypeOf<W.ShareGrant>().toEqualTypeOf<Of<typeof S.ShareGrant>>();
    expectTypeOf<W.CurrentVisitors>().toEqualTypeOf<Of<typeof S.CurrentVisitors>>();
    expectTypeOf<W.Realtime>().toEqualTypeOf<Of<typeof S.Realtime>>();
    expectTypeOf<W.Attribution>().toEqualTypeOf<Of<typeof S.Attribution>>();
    expectTypeOf<W.Reconciliation>().toEqualTypeOf<Of<typeof S.Reconciliation>>();
    expectTypeOf<W.Drilldown>().toEqualTypeOf<Of<typeof S.Drilldown>>();
    expectTypeOf<W.CustomerList>().toEqualTypeOf<Of<typeof S.CustomerList>>();
    expectTypeOf<W.CustomerPage>().toEqualTypeOf<Of<typeof S.CustomerPage>>();
    expectTypeOf<W.AcquisitionFunnel>().toEqualTypeOf<Of<typeof S.AcquisitionFunnel>>();
    expectTypeOf<W.Health>().toEqualTypeOf<Of<typeof S.Health>>();
    expectTypeOf<W.RevenueBreakdown>().toEqualTypeOf<Of<typeof S.RevenueBreakdown>>();
    expectTypeOf<W.RevenueSearch>().toEqualTypeOf<Of<typeof S.RevenueSearch>>();
    expectTypeOf<W.ExchangeRates>().toEqualTypeOf<Of<typeof S.ExchangeRates>>();
    expectTypeOf<W.AlertRule>().toEqualTypeOf<Of<typeof S.AlertRule>>();
    expectTypeOf<W.AlertRules>().toEqualTypeOf<Of<typeof S.AlertRules>>();
    expectTypeOf<W.Members>().toEqualTypeOf<Of<typeof S.Members>>();
  });
});
