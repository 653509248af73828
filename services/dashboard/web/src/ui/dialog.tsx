// A modal dialog on the browser's own <dialog> (focus kept inside and given back, Escape closes, the page
// behind inert), with a title and a close button. Controlled: `open` shows it, `onClose` is told when it
// closes by any means.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

let nextId = 0;

export function Dialog(props: {
  open: boolean;
  title: string;
  wide?: boolean;
  children: ComponentChildren;
  onClose(): void;
}) {
  const element = useRef<HTMLDialogElement>(null);
  const [id] = useState(() => `dialog-${++nextId}`);
  useEffect(() => {
    const dialog = element.current;
    if (!dialog) return;
    if (props.open && !dialog.open) dialog.showModal();
    if (!props.open && dialog.open) dialog.close();
  }, [props.open]);
  return (
    <dialog
      ref={element}
      class={props.wide ? 'dialog wide' : 'dialog'}
      aria-labelledby={`${id}-title`}
      onClose={props.onClose}
    >
      <div class="dialog-head">
        <h2 id={`${id}-title`}>{props.title}</h2>
        <button type="button" class="icon-button" aria-label="Close" onClick={props.onClose}>
          ×
        </button>
      </div>
      {props.open && props.children}
    </dialog>
  );
}
