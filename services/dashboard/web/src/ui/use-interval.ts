// Calls `callback` every `ms` while the component is mounted and the page is visible.
import { useEffect, useRef } from 'preact/hooks';

export function useInterval(callback: () => void, ms: number): void {
  const saved = useRef(callback);
  saved.current = callback;
  useEffect(() => {
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') saved.current();
    }, ms);
    return () => clearInterval(timer);
  }, [ms]);
}
