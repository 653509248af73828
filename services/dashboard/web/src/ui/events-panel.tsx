// Custom events: their counts and visitors, the keys their properties use, and the values of one key
// (chosen from the keys' list or typed in).
import { useState } from 'preact/hooks';
import { PanelFrame } from './breakdown-panel.tsx';
import { Tabs } from './tabs.tsx';

const TABS = [
  { id: 'events', label: 'Events' },
  { id: 'properties', label: 'Properties' },
];

export function EventsPanel() {
  const [tab, setTab] = useState('events');
  const [property, setProperty] = useState('');
  const tabs = <Tabs tabs={TABS} current={tab} label="Custom events" onSelect={setTab} />;
  if (tab === 'events') {
    return (
      <PanelFrame title="Custom events" id="events" tabs={tabs} caption="Events" dimension="event_name" />
    );
  }
  if (!property) {
    return (
      <PanelFrame
        title="Custom events"
        id="events"
        tabs={tabs}
        caption="Property keys"
        dimension="event_property_key"
        choose={{ label: 'Show the values of property', onValue: setProperty }}
      >
        <PropertyForm property={property} onProperty={setProperty} />
      </PanelFrame>
    );
  }
  return (
    <PanelFrame
      title="Custom events"
      id="events"
      tabs={tabs}
      caption={`Property ${property}`}
      dimension="event_property"
      property={property}
    >
      <PropertyForm property={property} onProperty={setProperty} />
    </PanelFrame>
  );
}

function PropertyForm(props: { property: string; onProperty(key: string): void }) {
  return (
    <form
      class="property-form"
      key={props.property}
      onSubmit={(e) => {
        e.preventDefault();
        props.onProperty(String(new FormData(e.currentTarget as HTMLFormElement).get('key') ?? '').trim());
      }}
    >
      <label class="field inline">
        <span class="field-label">Property</span>
        <input name="key" defaultValue={props.property} placeholder="plan" required maxLength={256} />
      </label>
      <button type="submit">Show values</button>
      {props.property ? (
        <button type="button" class="link-button" onClick={() => props.onProperty('')}>
          All keys
        </button>
      ) : (
        <p class="hint">Choose a key below, or type one, to see its values.</p>
      )}
    </form>
  );
}
