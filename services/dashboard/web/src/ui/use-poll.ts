// Polls one API resource every `ms` while the page is visible: the first request at once, the next `ms`
// after each answer (so slow answers never pile up), none while the tab is hidden (document.visibilityState),
// and one at once when it shows again. Each request names the ETag of the last answer, so an unchanged one
// comes back 304 without a body and nothing is redrawn.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Api, Params } from '../api/client.ts';

export interface PollResult<T> {
  data: T | undefined;
  error: Error | undefined;
  /** When the figures were last confirmed (an answer, changed or not), in ms since the epoch. */
  checkedAt: number | undefined;
}

export function usePoll<T>(api: Api, path: string, params: Params, ms: number): PollResult<T> {
  const key = `${path}?${JSON.stringify(params)}`;
  const [state, setState] = useState<PollResult<T>>({
    data: undefined,
    error: undefined,
    checkedAt: undefined,
  });
  const etag = useRef<string | null>(null);
  useEffect(() => {
    etag.current = null;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let controller: AbortController | undefined;
    let stopped = false;
    const poll = async () => {
      clearTimeout(timer);
      timer = undefined;
      if (stopped || document.visibilityState !== 'visible' || controller) return;
      controller = new AbortController();
      try {
        const answer = await api.getIfChanged<T>(path, params, etag.current, controller.signal);
        const checkedAt = Date.now();
        if (answer) {
          etag.current = answer.etag;
          setState({ data: answer.data, error: undefined, checkedAt });
        } else setState((s) => ({ ...s, error: undefined, checkedAt }));
      } catch (error) {
        if ((error as Error).name === 'AbortError') return;
        setState((s) => ({ ...s, error: error as Error }));
      } finally {
        controller = undefined;
      }
      if (!stopped && document.visibilityState === 'visible') timer = setTimeout(poll, ms);
    };
    const onVisibility = () => {
      if (document.visibilityState === 'visible') void poll();
      else clearTimeout(timer);
    };
    document.addEventListener('visibilitychange', onVisibility);
    void poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
      controller?.abort();
      document.removeEventListener('visibilitychange', onVisibility);
    };
  }, [api, key, ms]);
  return state;
}
