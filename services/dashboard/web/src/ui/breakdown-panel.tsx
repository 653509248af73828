// A panel of related breakdowns behind tabs (Sources: channels, sources, referrers, campaigns), with the
// short list, its details (every column, up to 100 rows, searchable, titled by what the list is) and its
// CSV export (every row).
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { BreakdownDimension } from '../api/types.ts';
import { useTraffic } from '../views/traffic-context.ts';
import { listName } from './breakdown-columns.ts';
import { BreakdownList, breakdownPath } from './breakdown-list.tsx';
import { CsvButton } from './csv-button.tsx';
import { Dialog } from './dialog.tsx';
import { Tabs } from './tabs.tsx';

export interface PanelTab {
  id: string;
  label: string;
  dimension: BreakdownDimension;
  /** Dimensions the tab can switch between (the UTM fields). */
  choices?: { dimension: BreakdownDimension; label: string }[];
}

export const SHORT_LIST = 10;
export const DETAILS_LIST = 100;
/** The API's largest page: a CSV export holds every row up to it. */
export const EXPORT_LIMIT = 10_000;

export function BreakdownPanel(props: {
  title: string;
  tabs: PanelTab[];
  footnote?: ComponentChildren;
  /** Shown above the list (the Locations card's map). */
  children?: ComponentChildren;
}) {
  const [tabId, setTabId] = useState(props.tabs[0]?.id ?? '');
  const tab = props.tabs.find((t) => t.id === tabId) ?? (props.tabs[0] as PanelTab);
  const [choice, setChoice] = useState<BreakdownDimension | null>(null);
  const dimension = tab.choices && choice ? choice : tab.dimension;
  const label = tab.choices?.find((c) => c.dimension === dimension)?.label ?? tab.label;
  return (
    <PanelFrame
      title={props.title}
      id={props.title.toLowerCase().replace(/\s+/g, '-')}
      tabs={
        props.tabs.length > 1 ? (
          <Tabs tabs={props.tabs} current={tab.id} label={props.title} onSelect={setTabId} />
        ) : null
      }
      caption={label}
      dimension={dimension}
      footnote={props.footnote}
    >
      {tab.choices && (
        <label class="field inline">
          <span class="field-label">Field</span>
          <select value={dimension} onChange={(e) => setChoice(e.currentTarget.value as BreakdownDimension)}>
            {tab.choices.map((c) => (
              <option key={c.dimension} value={c.dimension}>
                {c.label}
              </option>
            ))}
          </select>
        </label>
      )}
      {props.children}
    </PanelFrame>
  );
}

/** The details of a list: a search box over its rows, and the rows with every column. */
function DetailsList(props: {
  dimension: BreakdownDimension;
  caption: string;
  extra: { property?: string; choose?: { label: string; onValue(value: string): void } };
}) {
  const [search, setSearch] = useState('');
  return (
    <>
      <label class="field inline details-search">
        <span class="field-label">Search</span>
        <input
          type="search"
          value={search}
          onInput={(e) => setSearch((e.currentTarget as HTMLInputElement).value)}
        />
      </label>
      <div class="dialog-scroll">
        <BreakdownList
          dimension={props.dimension}
          {...props.extra}
          limit={DETAILS_LIST}
          full
          search={search}
          caption={props.caption}
        />
      </div>
    </>
  );
}

/** The card around one list: title, tabs, controls, the list, details and export. */
export function PanelFrame(props: {
  title: string;
  id: string;
  tabs: ComponentChildren;
  caption: string;
  dimension: BreakdownDimension;
  property?: string;
  /** What choosing a row does instead of filtering (BreakdownList's `choose`). */
  choose?: { label: string; onValue(value: string): void };
  children?: ComponentChildren;
  footnote?: ComponentChildren;
}) {
  const { project, params, fileName } = useTraffic();
  const [details, setDetails] = useState(false);
  const extra = {
    ...(props.property ? { property: props.property } : {}),
    ...(props.choose ? { choose: props.choose } : {}),
  };
  return (
    <section class="card panel" aria-labelledby={`${props.id}-title`} data-panel={props.id}>
      <div class="card-head">
        <h2 id={`${props.id}-title`}>{props.title}</h2>
        {props.tabs}
      </div>
      {props.children}
      <div role="tabpanel" aria-label={props.caption}>
        <BreakdownList dimension={props.dimension} {...extra} limit={SHORT_LIST} caption={props.caption} />
      </div>
      <div class="card-foot">
        <button type="button" class="link-button" onClick={() => setDetails(true)}>
          Details
        </button>
        <CsvButton
          label={props.caption}
          path={breakdownPath(project.id, props.dimension)}
          params={{ ...params, ...(props.property ? { property: props.property } : {}), limit: EXPORT_LIMIT }}
          fileName={fileName(props.property ? `${props.dimension}-${props.property}` : props.dimension)}
        />
      </div>
      {props.footnote && <p class="footnote">{props.footnote}</p>}
      <Dialog
        open={details}
        wide
        title={listName(props.dimension, props.property)}
        onClose={() => setDetails(false)}
      >
        <DetailsList dimension={props.dimension} caption={props.caption} extra={extra} />
      </Dialog>
    </section>
  );
}
