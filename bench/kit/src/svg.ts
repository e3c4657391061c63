/**
 * Hand-written SVG (no dependencies): the memory-over-time chart in the style of the field's heap
 * graph, one column per process, phases shaded; and a small line chart with a log-scale x axis.
 */

/** One point of a timeline (fan-out's sampler takes one every 250 ms). */
export interface TimelineSample {
  /** Seconds since the run started. */
  readonly t: number;
  /** VmRSS of the server process, MB. */
  readonly rssMb: number | undefined;
  /** V8 heap of the server (no forced GC), MB; undefined while the server is too busy to answer. */
  readonly heapUsedMb: number | undefined;
  readonly heapTotalMb: number | undefined;
  /** Server CPU over the last interval, % of one core. */
  readonly serverCpuPct: number;
  /** All load workers' CPU over the last interval, % of one core. */
  readonly clientCpuPct: number;
  /** Distinct deliveries per second over the last interval. */
  readonly deliveriesPerSec: number;
}

/** Where a phase (idle, connect, traffic, drain…) began, in seconds since the run started. */
export interface PhaseMark {
  readonly name: string;
  readonly t: number;
}

export interface TimelinePanel {
  readonly title: string;
  /** Up to two short lines under the title. */
  readonly subtitle: readonly string[];
  readonly samples: readonly TimelineSample[];
  readonly phases: readonly PhaseMark[];
}

const COLORS = {
  rss: '#1f77b4',
  heapUsed: '#ff7f0e',
  heapTotal: '#ffbb78',
  deliveries: '#2ca02c',
  serverCpu: '#d62728',
  clientCpu: '#9467bd',
  grid: '#e5e5e5',
  text: '#222',
  muted: '#666',
};
const PHASE_FILLS: Readonly<Record<string, string>> = {
  idle: '#f7f7f7',
  connect: '#eef4fb',
  half: '#f3f8ee',
  subscribed: '#eef8ee',
  traffic: '#fdf1e6',
  drain: '#fbeaea',
  done: '#f7f7f7',
  settle: '#f1eefa',
  closed: '#f7f7f7',
};

function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function niceMax(value: number): number {
  if (!(value > 0)) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * magnitude >= value) return step * magnitude;
  return 10 * magnitude;
}

function fmtTick(value: number): string {
  if (value >= 1e6) return `${+(value / 1e6).toFixed(1)}M`;
  if (value >= 1e3) return `${+(value / 1e3).toFixed(1)}k`;
  return `${+value.toFixed(1)}`;
}

function polyline(points: readonly (readonly [number, number] | undefined)[], color: string, dash = ''): string {
  // Gaps (undefined) split the line: a missing heap reading is a busy server, not a zero.
  const runs: string[] = [];
  let current: string[] = [];
  for (const p of points) {
    if (p === undefined) {
      if (current.length > 1) runs.push(current.join(' '));
      current = [];
    } else current.push(`${p[0].toFixed(1)},${p[1].toFixed(1)}`);
  }
  if (current.length > 1) runs.push(current.join(' '));
  return runs
    .map((pts) => `<polyline fill="none" stroke="${color}" stroke-width="1.6"${dash ? ` stroke-dasharray="${dash}"` : ''} points="${pts}"/>`)
    .join('');
}

interface Row {
  readonly label: string;
  readonly height: number;
  readonly max: number;
  readonly series: readonly { readonly color: string; readonly dash?: string; readonly value: (s: TimelineSample) => number | undefined }[];
}

/** Memory (RSS, heap), deliveries/s and CPU over time, one column per stack, phases shaded. */
export function timelineChart(title: string, note: string, panels: readonly TimelinePanel[]): string {
  const panelWidth = 330;
  const left = 58;
  const gap = 26;
  const top = 84;
  const rowGap = 34;
  const all = panels.flatMap((p) => p.samples);
  /** A panel row scaled to the largest value of its series over every sample (at least `floor`). */
  const row = (label: string, height: number, series: Row['series'], floor = 0): Row => ({
    label,
    height,
    max: niceMax(Math.max(floor, ...all.flatMap((s) => series.map((line) => line.value(s) ?? 0)))),
    series,
  });
  const rows: Row[] = [
    row('server memory, MB', 200, [
      { color: COLORS.rss, value: (s) => s.rssMb },
      { color: COLORS.heapTotal, dash: '4 3', value: (s) => s.heapTotalMb },
      { color: COLORS.heapUsed, value: (s) => s.heapUsedMb },
    ]),
    row('deliveries / s', 120, [{ color: COLORS.deliveries, value: (s) => s.deliveriesPerSec }]),
    row('CPU, % of a core', 90, [
      { color: COLORS.serverCpu, value: (s) => s.serverCpuPct },
      { color: COLORS.clientCpu, dash: '3 2', value: (s) => s.clientCpuPct },
    ], 100),
  ];
  const width = left + panels.length * (panelWidth + gap) + 10;
  const height = top + rows.reduce((h, r) => h + r.height + rowGap, 0) + 50;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${left}" y="22" font-size="15" font-weight="bold" fill="${COLORS.text}">${esc(title)}</text>`,
    `<text x="${left}" y="40" fill="${COLORS.muted}">${esc(note)}</text>`,
  ];
  panels.forEach((panel, col) => {
    const x0 = left + col * (panelWidth + gap);
    const tMax = Math.max(1, ...panel.samples.map((s) => s.t));
    const xOf = (t: number): number => x0 + (t / tMax) * panelWidth;
    out.push(`<text x="${x0}" y="${top - 28}" font-weight="bold" fill="${COLORS.text}">${esc(panel.title)}</text>`);
    panel.subtitle.slice(0, 2).forEach((line, i) => {
      out.push(`<text x="${x0}" y="${top - 15 + i * 12}" fill="${COLORS.muted}">${esc(line)}</text>`);
    });
    let y = top + 6;
    rows.forEach((row, rowIndex) => {
      const yOf = (v: number): number => y + row.height - (Math.min(v, row.max) / row.max) * row.height;
      // Phases.
      panel.phases.forEach((phase, i) => {
        const next = panel.phases[i + 1]?.t ?? tMax;
        const fill = PHASE_FILLS[phase.name] ?? '#f7f7f7';
        out.push(`<rect x="${xOf(phase.t).toFixed(1)}" y="${y}" width="${Math.max(0, xOf(next) - xOf(phase.t)).toFixed(1)}" height="${row.height}" fill="${fill}"/>`);
        if (rowIndex === 0 && xOf(next) - xOf(phase.t) > 24) {
          out.push(`<text x="${(xOf(phase.t) + 3).toFixed(1)}" y="${y + 11}" fill="${COLORS.muted}" font-size="9">${esc(phase.name)}</text>`);
        }
      });
      // Grid and axis.
      for (let k = 0; k <= 4; k++) {
        const v = (row.max * k) / 4;
        const gy = yOf(v);
        out.push(`<line x1="${x0}" x2="${x0 + panelWidth}" y1="${gy.toFixed(1)}" y2="${gy.toFixed(1)}" stroke="${COLORS.grid}"/>`);
        if (col === 0) out.push(`<text x="${x0 - 4}" y="${(gy + 3).toFixed(1)}" text-anchor="end" fill="${COLORS.muted}">${fmtTick(v)}</text>`);
      }
      if (col === 0) {
        out.push(`<text transform="translate(12 ${y + row.height / 2}) rotate(-90)" text-anchor="middle" fill="${COLORS.text}">${esc(row.label)}</text>`);
      }
      out.push(`<rect x="${x0}" y="${y}" width="${panelWidth}" height="${row.height}" fill="none" stroke="#bbb"/>`);
      for (const series of row.series) {
        out.push(
          polyline(
            panel.samples.map((s) => {
              const v = series.value(s);
              return v === undefined ? undefined : ([xOf(s.t), yOf(v)] as const);
            }),
            series.color,
            series.dash,
          ),
        );
      }
      y += row.height + rowGap;
    });
    // Time axis.
    const axisY = y - rowGap + 14;
    for (let k = 0; k <= 4; k++) {
      const t = (tMax * k) / 4;
      out.push(`<text x="${xOf(t).toFixed(1)}" y="${axisY}" text-anchor="middle" fill="${COLORS.muted}">${t.toFixed(0)} s</text>`);
    }
  });
  const legendY = height - 14;
  const legend: [string, string, string][] = [
    [COLORS.rss, '', 'RSS (/proc VmRSS)'],
    [COLORS.heapUsed, '', 'V8 heap used'],
    [COLORS.heapTotal, '4 3', 'V8 heap total'],
    [COLORS.deliveries, '', 'distinct deliveries/s'],
    [COLORS.serverCpu, '', 'server CPU'],
    [COLORS.clientCpu, '3 2', 'load client CPU (all workers)'],
  ];
  let lx = left;
  for (const [color, dash, label] of legend) {
    out.push(`<line x1="${lx}" x2="${lx + 22}" y1="${legendY - 4}" y2="${legendY - 4}" stroke="${color}" stroke-width="2"${dash ? ` stroke-dasharray="${dash}"` : ''}/>`);
    out.push(`<text x="${lx + 26}" y="${legendY}" fill="${COLORS.text}">${esc(label)}</text>`);
    lx += 36 + label.length * 6;
  }
  out.push('</svg>');
  return out.join('\n');
}

export interface LineSeries {
  readonly label: string;
  readonly points: readonly (readonly [x: number, y: number])[];
}

/** A small line chart with a log-scale x axis (distinct operations) and several series. */
export function logXLineChart(title: string, note: string, xLabel: string, yLabel: string, series: readonly LineSeries[]): string {
  const width = 600;
  const height = 350;
  const left = 70;
  const right = 40;
  const top = 56;
  const bottom = 60;
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const xs = series.flatMap((s) => s.points.map((p) => p[0]));
  const xMin = Math.log10(Math.max(1, Math.min(...xs)));
  const xMax = Math.max(xMin + 1, Math.log10(Math.max(...xs)));
  const yMax = niceMax(Math.max(...series.flatMap((s) => s.points.map((p) => p[1]))));
  const xOf = (x: number): number => left + ((Math.log10(Math.max(1, x)) - xMin) / (xMax - xMin)) * plotW;
  const yOf = (y: number): number => top + plotH - (y / yMax) * plotH;
  const palette = [COLORS.rss, COLORS.heapUsed, COLORS.deliveries, COLORS.serverCpu, COLORS.clientCpu];
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${left}" y="22" font-size="14" font-weight="bold" fill="${COLORS.text}">${esc(title)}</text>`,
    `<text x="${left}" y="40" fill="${COLORS.muted}">${esc(note)}</text>`,
  ];
  for (let k = 0; k <= 4; k++) {
    const v = (yMax * k) / 4;
    out.push(`<line x1="${left}" x2="${left + plotW}" y1="${yOf(v).toFixed(1)}" y2="${yOf(v).toFixed(1)}" stroke="${COLORS.grid}"/>`);
    out.push(`<text x="${left - 5}" y="${(yOf(v) + 3).toFixed(1)}" text-anchor="end" fill="${COLORS.muted}">${fmtTick(v)}</text>`);
  }
  for (const x of [...new Set(xs)].sort((a, b) => a - b)) {
    out.push(`<line x1="${xOf(x).toFixed(1)}" x2="${xOf(x).toFixed(1)}" y1="${top}" y2="${top + plotH}" stroke="${COLORS.grid}"/>`);
    out.push(`<text x="${xOf(x).toFixed(1)}" y="${top + plotH + 15}" text-anchor="middle" fill="${COLORS.muted}">${fmtTick(x)}</text>`);
  }
  out.push(`<rect x="${left}" y="${top}" width="${plotW}" height="${plotH}" fill="none" stroke="#bbb"/>`);
  out.push(`<text x="${left + plotW / 2}" y="${height - 28}" text-anchor="middle" fill="${COLORS.text}">${esc(xLabel)}</text>`);
  out.push(`<text transform="translate(16 ${top + plotH / 2}) rotate(-90)" text-anchor="middle" fill="${COLORS.text}">${esc(yLabel)}</text>`);
  series.forEach((s, i) => {
    const color = palette[i % palette.length] as string;
    out.push(polyline(s.points.map((p) => [xOf(p[0]), yOf(p[1])] as const), color));
    for (const p of s.points) out.push(`<circle cx="${xOf(p[0]).toFixed(1)}" cy="${yOf(p[1]).toFixed(1)}" r="3" fill="${color}"/>`);
    const lx = left + i * 160;
    out.push(`<line x1="${lx}" x2="${lx + 20}" y1="${height - 10}" y2="${height - 10}" stroke="${color}" stroke-width="2"/>`);
    out.push(`<text x="${lx + 24}" y="${height - 6}" fill="${COLORS.text}">${esc(s.label)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n');
}
