// The traffic view: range and filters (kept in the URL), the top figures with their change, the time series
// and the breakdown panels. Every panel reads the same range and filters, so a filter narrows all of them.
// Each panel loads on its own and fails on its own (its message and a Retry button), the others unharmed.
// An empty project shows how to install the tracker instead of empty panels.

import { useMemo } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import type { Install, Summary } from '../api/types.ts';
import { useQuery } from '../api/use-query.ts';
import { useSignInOn } from '../pages/session.ts';
import { withFilter, withoutFilter } from '../query/filters.ts';
import { rangeParams, readViewState, resolveView, type ViewState, viewSearch } from '../query/view-state.ts';
import { BreakdownPanel } from '../ui/breakdown-panel.tsx';
import { CountryMap } from '../ui/country-map.tsx';
import { EventsPanel } from '../ui/events-panel.tsx';
import { FilterBar } from '../ui/filter-bar.tsx';
import { GoalsPanel } from '../ui/goals-panel.tsx';
import { InstallGuide } from '../ui/install-guide.tsx';
import { RangeControl } from '../ui/range-control.tsx';
import { TimeChart } from '../ui/time-chart.tsx';
import { TopFigures } from '../ui/top-figures.tsx';
import { TrafficContext, type TrafficContextValue } from './traffic-context.ts';
import type { ViewProps } from './view-props.ts';

const UTM = [
  { id: 'utm_source', label: 'Source' },
  { id: 'utm_medium', label: 'Medium' },
  { id: 'utm_campaign', label: 'Campaign' },
  { id: 'utm_term', label: 'Term' },
  { id: 'utm_content', label: 'Content' },
] as const;

export function TrafficView({ api, project, path }: ViewProps) {
  const { query, route } = useLocation();
  const state = readViewState(query);
  const { range, interval } = resolveView(state, project.today);
  const update = (patch: Partial<ViewState>) => route(`${path}${viewSearch({ ...state, ...patch })}`);
  const filterKey = JSON.stringify(state.filters);

  const context = useMemo<TrafficContextValue>(
    () => ({
      api,
      project,
      range,
      interval,
      filters: state.filters,
      params: rangeParams(range, state.filters),
      addFilter: (dimension, value) => update({ filters: withFilter(state.filters, dimension, value) }),
      fileName: (what) => `${project.id}-${what}-${range.from}-${range.to}.csv`,
    }),
    [api, project, range.from, range.to, interval, filterKey, path],
  );

  const summary = useQuery<Summary>(api, `/projects/${encodeURIComponent(project.id)}/traffic/summary`, {
    ...context.params,
    compare: state.compare,
  });
  // A session that ended while the page was open: sign in again and come back to this view.
  useSignInOn(api.kind === 'session' ? summary.error : undefined, route);
  const nothingInRange =
    summary.data !== undefined &&
    !summary.stale &&
    !summary.error &&
    summary.data.pageviews === 0 &&
    summary.data.events === 0 &&
    state.filters.length === 0;
  // Whether the project has ever had data decides between "install the tracker" and "nothing in this range".
  const install = useQuery<Install>(
    api,
    nothingInRange && project.access.can_edit ? `/projects/${encodeURIComponent(project.id)}/install` : null,
  );
  const neverHadData = nothingInRange && install.data?.has_data === false;

  return (
    <TrafficContext.Provider value={context}>
      <section class="toolbar" aria-label="Range and filters">
        <RangeControl
          state={state}
          range={range}
          interval={interval}
          today={project.today}
          timeZone={project.time_zone}
          onChange={update}
        />
        <FilterBar
          filters={state.filters}
          onRemove={(index) => update({ filters: withoutFilter(state.filters, index) })}
          onAdd={(filter) => update({ filters: [...state.filters, filter] })}
          onClear={() => update({ filters: [] })}
          onApply={(filters) => update({ filters })}
        />
      </section>
      {neverHadData && install.data ? (
        <InstallGuide
          api={api}
          project={project}
          install={install.data}
          onCheck={() => {
            install.reload();
            summary.reload();
          }}
        />
      ) : (
        <>
          <TopFigures
            summary={summary.error ? undefined : summary.data}
            error={summary.error}
            onRetry={summary.reload}
            stale={summary.stale || summary.loading}
            metric={state.metric}
            compare={state.compare}
            onMetric={(metric) => update({ metric })}
          />
          <TimeChart metric={state.metric} compare={state.compare} />
          {nothingInRange && (
            <output class="notice">No pageviews or events in this range. Try a longer one.</output>
          )}
          <div class="panels">
            <BreakdownPanel
              title="Sources"
              tabs={[
                { id: 'channel', label: 'Channels', dimension: 'channel' },
                { id: 'source', label: 'Sources', dimension: 'source' },
                { id: 'referrer', label: 'Referrers', dimension: 'referrer' },
                {
                  id: 'utm',
                  label: 'Campaigns',
                  dimension: 'utm_source',
                  choices: UTM.map((u) => ({ dimension: u.id, label: `UTM ${u.label.toLowerCase()}` })),
                },
              ]}
            />
            <BreakdownPanel
              title="Pages"
              tabs={[
                { id: 'page', label: 'Top pages', dimension: 'page' },
                { id: 'entry', label: 'Entry pages', dimension: 'entry_page' },
                { id: 'exit', label: 'Exit pages', dimension: 'exit_page' },
                { id: 'not-found', label: 'Not found', dimension: 'not_found' },
              ]}
            />
            <BreakdownPanel
              title="Locations"
              tabs={[
                { id: 'country', label: 'Countries', dimension: 'country' },
                { id: 'region', label: 'Regions', dimension: 'region' },
                { id: 'city', label: 'Cities', dimension: 'city' },
              ]}
              footnote={
                <>
                  Countries, regions and cities from the visitor's IP address at ingestion (the address itself
                  is never stored). IP Geolocation by <a href="https://db-ip.com">DB-IP</a>. Map shapes:
                  Natural Earth.
                </>
              }
            >
              <CountryMap />
            </BreakdownPanel>
            <BreakdownPanel
              title="Devices"
              tabs={[
                { id: 'browser', label: 'Browsers', dimension: 'browser' },
                { id: 'os', label: 'Systems', dimension: 'os' },
                { id: 'device', label: 'Devices', dimension: 'device' },
                { id: 'screen', label: 'Screens', dimension: 'screen_size' },
              ]}
            />
            <EventsPanel />
            <GoalsPanel />
          </div>
        </>
      )}
    </TrafficContext.Provider>
  );
}
