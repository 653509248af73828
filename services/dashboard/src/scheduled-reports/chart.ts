// The one small chart of a report email: visitors per day of the period as bars, a PNG (mail clients show
// PNG inline; most strip SVG, and none runs script). Drawn pixel by pixel into pngjs's buffer: bars and a
// baseline need no canvas, no font and no native module. The figures themselves are in the email's text;
// the image only shows their shape (its alt text says what it is).
import { PNG } from 'pngjs';

export const CHART_WIDTH = 560;
export const CHART_HEIGHT = 140;
const PAD = 8;
const BAR = [79, 70, 229] as const; // the dashboard's accent
const LAST = [165, 160, 240] as const; // a day not over yet (none in a report of a past period)
const BASE = [209, 213, 219] as const;

function fill(png: PNG, x0: number, y0: number, x1: number, y1: number, rgb: readonly number[]): void {
  for (let y = Math.max(0, y0); y < Math.min(png.height, y1); y += 1) {
    for (let x = Math.max(0, x0); x < Math.min(png.width, x1); x += 1) {
      const i = (y * png.width + x) * 4;
      png.data[i] = rgb[0] as number;
      png.data[i + 1] = rgb[1] as number;
      png.data[i + 2] = rgb[2] as number;
      png.data[i + 3] = 255;
    }
  }
}

/**
 * Bars of `values` (one per day, oldest first) scaled to the largest, on white, as PNG bytes; the bars of
 * days marked `partial` lighter. Zero days are a gap on the baseline.
 */
export function barChartPng(values: readonly number[], partial: readonly boolean[] = []): Buffer {
  const png = new PNG({ width: CHART_WIDTH, height: CHART_HEIGHT });
  fill(png, 0, 0, CHART_WIDTH, CHART_HEIGHT, [255, 255, 255]);
  const top = PAD;
  const bottom = CHART_HEIGHT - PAD;
  fill(png, PAD, bottom, CHART_WIDTH - PAD, bottom + 1, BASE);
  const max = Math.max(0, ...values);
  const slot = (CHART_WIDTH - 2 * PAD) / Math.max(1, values.length);
  const gap = Math.max(1, Math.round(slot * 0.2));
  values.forEach((value, i) => {
    if (max === 0 || value <= 0) return;
    const height = Math.max(1, Math.round(((bottom - top) * value) / max));
    const x0 = Math.round(PAD + i * slot + gap / 2);
    const x1 = Math.round(PAD + (i + 1) * slot - gap / 2);
    fill(png, x0, bottom - height, Math.max(x0 + 1, x1), bottom, partial[i] ? LAST : BAR);
  });
  return PNG.sync.write(png);
}
