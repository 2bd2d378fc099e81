/** @jsxImportSource hono/jsx */
/** Line charts drawn on the server as SVG (no script, no chart library needed for three lines). */

/** One point: time (ms) and value. */
export type Point = [number, number];

const W = 320;
const H = 120;
const PAD = { left: 38, right: 8, top: 16, bottom: 18 };

/** A short label of a value: 0.25, 12, 1.2k. */
function short(v: number): string {
  if (v >= 1000) return `${(v / 1000).toFixed(v >= 10_000 ? 0 : 1)}k`;
  if (v >= 10 || v === 0) return v.toFixed(0);
  return v.toFixed(v >= 1 ? 1 : 2);
}

/** The label of a round axis value: 1, 2.5, 0.05, 20k (no trailing zeros). */
function axisLabel(v: number): string {
  return v >= 1000 ? `${Number((v / 1000).toPrecision(3))}k` : String(Number(v.toPrecision(3)));
}

/**
 * The top of a chart's axis: the smallest of 1, 2, 2.5 and 5 times a power of ten that is at least
 * the highest value, so the axis reads a round number; 1 when there is nothing above zero.
 */
export function axisMax(max: number): number {
  if (!(max > 0)) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 2.5, 5, 10]) {
    // The tolerance keeps 0.3 from becoming 0.5 through 3 * 0.1 = 0.30000000000000004.
    const top = Number((step * magnitude).toPrecision(12));
    if (top >= max * (1 - 1e-12)) return top;
  }
  return 10 * magnitude;
}

/** HH:MM (UTC) of a time. */
function clock(ms: number): string {
  return new Date(ms).toISOString().slice(11, 16);
}

/**
 * A line chart of `points` between `from` and `to` (ms). Gaps longer than `gapMs` break the line
 * (the gateway did not report). The chart is an image with a text alternative that states the
 * latest and the highest value.
 */
export function LineChart(
  { title, unit, points, from, to, gapMs, kind = "line", testId }: {
    title: string;
    unit: string;
    points: Point[];
    from: number;
    to: number;
    gapMs: number;
    kind?: "line" | "err";
    testId?: string;
  },
) {
  const max = Math.max(0, ...points.map((p) => p[1]));
  const top = axisMax(max);
  const x = (t: number) => PAD.left + (W - PAD.left - PAD.right) * (t - from) / (to - from || 1);
  const y = (v: number) => PAD.top + (H - PAD.top - PAD.bottom) * (1 - v / top);
  const segments: Point[][] = [];
  for (const p of points) {
    const last = segments.at(-1);
    if (last && p[0] - last.at(-1)![0] <= gapMs) last.push(p);
    else segments.push([p]);
  }
  const latest = points.at(-1);
  const summary = points.length
    ? `${title}: latest ${short(latest![1])} ${unit}, highest ${short(max)} ${unit}`
    : `${title}: no reports in this period`;
  return (
    <svg
      class="chart"
      viewBox={`0 0 ${W} ${H}`}
      width={W}
      height={H}
      role="img"
      aria-label={summary}
      data-testid={testId}
      data-points={String(points.length)}
    >
      <title>{summary}</title>
      <text x={PAD.left} y={11}>{title} ({unit})</text>
      <line class="grid" x1={PAD.left} x2={W - PAD.right} y1={y(0)} y2={y(0)} />
      <line class="grid" x1={PAD.left} x2={W - PAD.right} y1={y(top)} y2={y(top)} />
      <text x={2} y={y(0) + 3}>0</text>
      <text x={2} y={y(top) + 3} data-testid="axis-max">{axisLabel(top)}</text>
      <text x={PAD.left} y={H - 4}>{clock(from)}</text>
      <text x={W - PAD.right - 28} y={H - 4}>{clock(to)}</text>
      {segments.map((seg, i) =>
        seg.length === 1
          ? <circle key={i} class={kind} cx={x(seg[0][0])} cy={y(seg[0][1])} r={2} />
          : (
            <polyline
              key={i}
              class={kind}
              points={seg.map((p) => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(" ")}
            />
          )
      )}
    </svg>
  );
}
