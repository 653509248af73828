// The filters in force, each removable, and a form to add any filter the API knows: a dimension (or an event
// property), an operator and one or more values. Clicking a row of any list adds a filter too
// (breakdown-list.tsx). The project's saved segments (named filter sets, shared with everyone who reads the
// project) are one click away in the Segments menu; an editor saves the filters in force as one.
import { useRef, useState } from 'preact/hooks';
import type { Breakdown, BreakdownDimension, Segment, Segments } from '../api/types.ts';
import { useQuery } from '../api/use-query.ts';
import {
  dimensionLabel,
  FILTER_DIMENSIONS,
  type Filter,
  type FilterOperator,
  OPERATORS,
  operatorLabel,
  parseFilters,
  serializeFilters,
} from '../query/filters.ts';
import { useTraffic } from '../views/traffic-context.ts';
import { valueLabel } from './breakdown-columns.ts';
import { breakdownPath } from './breakdown-list.tsx';
import { Dialog } from './dialog.tsx';

export function FilterBar(props: {
  filters: Filter[];
  onRemove(index: number): void;
  onAdd(filter: Filter): void;
  onClear(): void;
  /** Puts these filters in force instead (a saved segment). */
  onApply(filters: Filter[]): void;
}) {
  const [adding, setAdding] = useState(false);
  return (
    <div class="filter-bar">
      {props.filters.length > 0 && (
        <ul class="chips" aria-label="Filters in force">
          {props.filters.map((f, i) => {
            // Values read as in the lists (a country's name, a device type capitalised); the URL keeps them as stored.
            const values = f.values.map((v) =>
              f.operator.includes('~') ? v || '(unknown)' : valueLabel(f.dimension, v),
            );
            const text = `${dimensionLabel(f.dimension)} ${operatorLabel(f.operator)} ${values.join(' or ')}`;
            return (
              <li key={`${f.dimension}${f.operator}${i}`} class="chip">
                <span>{text}</span>
                <button type="button" aria-label={`Remove filter: ${text}`} onClick={() => props.onRemove(i)}>
                  ×
                </button>
              </li>
            );
          })}
        </ul>
      )}
      <button type="button" class="add-filter" onClick={() => setAdding(true)}>
        + Filter
      </button>
      {props.filters.length > 1 && (
        <button type="button" class="link-button" onClick={props.onClear}>
          Clear all
        </button>
      )}
      <SegmentsMenu filters={props.filters} onApply={props.onApply} />
      <Dialog open={adding} title="Add a filter" onClose={() => setAdding(false)}>
        <AddFilterForm
          open={adding}
          onAdd={(filter) => {
            setAdding(false);
            props.onAdd(filter);
          }}
        />
      </Dialog>
    </div>
  );
}

function AddFilterForm({ open, onAdd }: { open: boolean; onAdd(filter: Filter): void }) {
  const [dimension, setDimension] = useState('page');
  const valuesBox = useRef<HTMLTextAreaElement>(null);
  return (
    <form
      class="stack"
      onSubmit={(e) => {
        e.preventDefault();
        const form = new FormData(e.currentTarget as HTMLFormElement);
        const values = String(form.get('values') ?? '')
          .split('\n')
          .map((v) => v.trim())
          .filter((v) => v !== '');
        const key = String(form.get('property') ?? '').trim();
        if (dimension === 'prop' && !key) return;
        onAdd({
          dimension: dimension === 'prop' ? `prop:${key}` : dimension,
          operator: String(form.get('operator')) as FilterOperator,
          values: values.length > 0 ? values : [''],
        });
        (e.currentTarget as HTMLFormElement).reset();
      }}
    >
      <label>
        Dimension
        <select name="dimension" value={dimension} onChange={(e) => setDimension(e.currentTarget.value)}>
          {FILTER_DIMENSIONS.map((d) => (
            <option key={d.id} value={d.id}>
              {d.label}
            </option>
          ))}
          <option value="prop">Event property…</option>
        </select>
      </label>
      {dimension === 'prop' && (
        <label>
          Property key
          <input name="property" required placeholder="plan" />
        </label>
      )}
      <label>
        Operator
        <select name="operator">
          {OPERATORS.map((o) => (
            <option key={o.op} value={o.op}>
              {o.label}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span>
          Values <span class="muted">(one per line: any of them matches)</span>
        </span>
        <textarea
          ref={valuesBox}
          name="values"
          rows={3}
          placeholder={dimension.endsWith('page') ? '/blog/*' : ''}
        />
      </label>
      {open && dimension !== 'prop' && (
        <ValueSuggestions
          dimension={dimension as BreakdownDimension}
          onPick={(value) => {
            const box = valuesBox.current;
            if (!box) return;
            const lines = box.value.split('\n').filter((line) => line.trim() !== '');
            if (!lines.includes(value)) box.value = [...lines, value].join('\n');
            box.focus();
          }}
        />
      )}
      <p class="hint">In pages, * matches any characters: /blog/* is every page under /blog/.</p>
      <button type="submit" class="primary">
        Apply filter
      </button>
    </form>
  );
}

/** The dimension's top values in the range and filters in force, each a button that adds it to the values. */
function ValueSuggestions(props: { dimension: BreakdownDimension; onPick(value: string): void }) {
  const { api, project, params } = useTraffic();
  const result = useQuery<Breakdown>(api, breakdownPath(project.id, props.dimension), {
    ...params,
    limit: 10,
  });
  const values = (result.data?.rows ?? []).map((r) => r.value).filter((v) => v !== '');
  if (values.length === 0) return null;
  return (
    <div class="value-suggestions">
      <span class="muted">Top values in this range:</span>
      <ul aria-label="Top values">
        {values.map((value) => (
          <li key={value}>
            <button type="button" class="link-button" onClick={() => props.onPick(value)}>
              {valueLabel(props.dimension, value)}
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}

/**
 * The saved segments, each applying its filters in one click; an editor saves the filters in force as one,
 * and removes one.
 */
function SegmentsMenu(props: { filters: Filter[]; onApply(filters: Filter[]): void }) {
  const { api, project } = useTraffic();
  const path = `/projects/${encodeURIComponent(project.id)}/segments`;
  const segments = useQuery<Segments>(api, path);
  const menu = useRef<HTMLDetailsElement>(null);
  const [error, setError] = useState<string | null>(null);
  const list = segments.data?.segments ?? [];
  const canSave = project.access.can_edit && props.filters.length > 0;
  if (list.length === 0 && !canSave) return null;
  const close = () => menu.current?.removeAttribute('open');
  return (
    <details class="segments-menu" ref={menu}>
      <summary>Segments</summary>
      <div class="segments-panel">
        {list.length > 0 ? (
          <ul aria-label="Saved segments">
            {list.map((segment: Segment) => (
              <li key={segment.id}>
                <button
                  type="button"
                  class="link-button"
                  title={segment.filters}
                  onClick={() => {
                    close();
                    props.onApply(parseFilters(segment.filters));
                  }}
                >
                  {segment.name}
                </button>
                {project.access.can_edit && (
                  <button
                    type="button"
                    class="link-button remove-button"
                    aria-label={`Remove the segment ${segment.name}`}
                    title="Remove"
                    onClick={async () => {
                      try {
                        await api.send('DELETE', `${path}/${encodeURIComponent(segment.id)}`);
                        setError(null);
                        segments.reload();
                      } catch (err) {
                        setError((err as Error).message);
                      }
                    }}
                  >
                    ×
                  </button>
                )}
              </li>
            ))}
          </ul>
        ) : (
          <p class="hint">No saved segments yet.</p>
        )}
        {canSave && (
          <form
            class="segment-form"
            onSubmit={async (e) => {
              e.preventDefault();
              const element = e.currentTarget as HTMLFormElement;
              const name = String(new FormData(element).get('name') ?? '').trim();
              if (!name) return;
              try {
                await api.send<Segment>('POST', path, { name, filters: serializeFilters(props.filters) });
                setError(null);
                element.reset();
                segments.reload();
              } catch (err) {
                setError((err as Error).message);
              }
            }}
          >
            <label>
              Save these filters as a segment
              <input name="name" required maxLength={200} placeholder="Segment name" />
            </label>
            <button type="submit" class="primary">
              Save
            </button>
          </form>
        )}
        {error && (
          <p class="form-error" role="alert">
            {error}
          </p>
        )}
      </div>
    </details>
  );
}
