// Exports a list as CSV: the same request as the list's, answered by the API as text/csv, saved as a file.
// Done with fetch rather than a plain link so that a share link's bearer credential goes with it.
import { useState } from 'preact/hooks';
import { type Params, saveFile } from '../api/client.ts';
import { useTraffic } from '../views/traffic-context.ts';

export function CsvButton(props: { label: string; path: string; params: Params; fileName: string }) {
  const { api } = useTraffic();
  const [state, setState] = useState<'idle' | 'busy' | 'failed'>('idle');
  return (
    <button
      type="button"
      class="csv-button"
      aria-label={`Export ${props.label} as CSV`}
      disabled={state === 'busy'}
      onClick={async () => {
        setState('busy');
        try {
          saveFile(await api.csv(props.path, props.params), props.fileName);
          setState('idle');
        } catch {
          setState('failed');
        }
      }}
    >
      {state === 'failed' ? 'Export failed, retry' : 'CSV'}
    </button>
  );
}
