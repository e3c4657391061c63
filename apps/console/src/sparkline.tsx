/** A tiny SVG line chart: no chart library, a few hundred points at most. */
export interface SparklineProps {
  /** Oldest first; `undefined` leaves a gap. */
  readonly values: readonly (number | undefined)[];
  /** Points the x axis holds (fewer values draw from the right). @default values.length */
  readonly capacity?: number;
  readonly label: string;
  readonly height?: number;
}

const WIDTH = 300;

export function Sparkline({ values, capacity = values.length, label, height = 48 }: SparklineProps) {
  let max = 0;
  for (const v of values) if (v !== undefined && v > max) max = v;
  const scale = max > 0 ? (height - 4) / max : 0;
  const step = WIDTH / Math.max(1, capacity - 1);
  const offset = capacity - values.length;
  // One line path with a move-to after every gap, and the area under each run of points.
  let line = '';
  let area = '';
  let runStartX: string | undefined;
  let lastX = '';
  const bottom = String(height);
  const closeRun = () => {
    if (runStartX !== undefined) area += `L${lastX} ${bottom}L${runStartX} ${bottom}Z`;
    runStartX = undefined;
  };
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v === undefined) {
      closeRun();
      continue;
    }
    const x = ((offset + i) * step).toFixed(1);
    const y = (height - 2 - v * scale).toFixed(1);
    line += `${runStartX === undefined ? 'M' : 'L'}${x} ${y}`;
    area += `${runStartX === undefined ? 'M' : 'L'}${x} ${y}`;
    runStartX ??= x;
    lastX = x;
  }
  closeRun();
  return (
    <svg className="sparkline" viewBox={`0 0 ${WIDTH} ${height}`} preserveAspectRatio="none" role="img" aria-label={label}>
      <path className="area" d={area} fill="currentColor" fillOpacity="0.12" stroke="none" />
      <path className="line" d={line} fill="none" stroke="currentColor" strokeWidth="1.5" vectorEffect="non-scaling-stroke" />
    </svg>
  );
}
