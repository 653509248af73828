// Loads one API resource for a component and reloads it when its path or parameters change. The data of
// the previous parameters stays on screen while the next loads (marked `stale`), so changing a filter does
// not blank the page; an answer that arrives after a newer request was made is dropped.
import { useEffect, useState } from 'preact/hooks';
import type { Api, Params } from './client.ts';

export interface QueryResult<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  /** Whether `data` belongs to earlier parameters than the current ones. */
  stale: boolean;
  reload(): void;
}

export function useQuery<T>(api: Api, path: string | null, params?: Params): QueryResult<T> {
  const key = path === null ? null : `${path}?${JSON.stringify(params ?? {})}`;
  const [state, setState] = useState<{ key: string | null; data?: T; error?: Error; loading: boolean }>({
    key: null,
    loading: path !== null,
  });
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    if (path === null) return;
    const controller = new AbortController();
    setState((s) => ({ ...s, loading: true, error: undefined }));
    api.get<T>(path, params, controller.signal).then(
      (data) => setState({ key, data, loading: false }),
      (error: Error) => {
        if (error.name !== 'AbortError') setState((s) => ({ ...s, key, error, loading: false }));
      },
    );
    return () => controller.abort();
  }, [api, key, generation]);
  return {
    data: state.data,
    error: state.error,
    loading: state.loading,
    stale: state.key !== key,
    reload: () => setGeneration((g) => g + 1),
  };
}
