// The project's annotations on a time chart: a uPlot plugin that draws a marker line per bucket with notes
// (its texts on hover, focus or tap), shared by the traffic chart and the revenue charts. Which bucket a
// note falls in is query/annotations.ts's.
import type uPlot from 'uplot';

/**
 * uPlot plugin: a marker line per bucket with notes, its texts shown on hover, focus or tap. `notes` may be
 * a function, read again whenever the chart's data or size changes (a chart that keeps its instance while
 * its buckets move, as the realtime one does).
 */
export function annotationMarkers(
  notes: Map<number, string[]> | (() => Map<number, string[]>),
): uPlot.Plugin {
  const place = (u: uPlot) => {
    for (const old of u.over.querySelectorAll('.annotation-marker')) old.remove();
    for (const [i, texts] of typeof notes === 'function' ? notes() : notes) {
      const marker = document.createElement('button');
      marker.type = 'button';
      marker.className = 'annotation-marker';
      marker.style.left = `${u.valToPos(i, 'x')}px`;
      marker.setAttribute('aria-label', `Note: ${texts.join('; ')}`);
      const tip = document.createElement('span');
      tip.className = 'annotation-tip';
      tip.textContent = texts.join(' · ');
      if (u.valToPos(i, 'x') > u.over.clientWidth / 2) tip.classList.add('to-left');
      marker.append(tip);
      u.over.append(marker);
    }
  };
  return { hooks: { ready: place, setSize: place, setData: place } };
}
