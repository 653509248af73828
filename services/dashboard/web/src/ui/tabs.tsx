// Tabs as the WAI-ARIA pattern has them: one tab stop, arrow keys move between tabs, Home and End jump.
export function Tabs<T extends { id: string; label: string }>(props: {
  tabs: T[];
  current: string;
  label: string;
  onSelect(id: string): void;
}) {
  const move = (event: KeyboardEvent, index: number) => {
    const last = props.tabs.length - 1;
    const next =
      event.key === 'ArrowRight'
        ? index === last
          ? 0
          : index + 1
        : event.key === 'ArrowLeft'
          ? index === 0
            ? last
            : index - 1
          : event.key === 'Home'
            ? 0
            : event.key === 'End'
              ? last
              : null;
    if (next === null) return;
    event.preventDefault();
    const tab = props.tabs[next] as T;
    props.onSelect(tab.id);
    const list = (event.currentTarget as HTMLElement).parentElement;
    (list?.children[next] as HTMLElement | undefined)?.focus();
  };
  return (
    <div role="tablist" aria-label={props.label} class="tabs">
      {props.tabs.map((t, i) => (
        <button
          key={t.id}
          type="button"
          role="tab"
          aria-selected={t.id === props.current}
          tabIndex={t.id === props.current ? 0 : -1}
          onClick={() => props.onSelect(t.id)}
          onKeyDown={(e) => move(e, i)}
        >
          {t.label}
        </button>
      ))}
    </div>
  );
}
