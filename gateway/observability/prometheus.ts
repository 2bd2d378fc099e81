/**
 * A small Prometheus registry: counters, gauges and histograms with labels, rendered in the text
 * exposition format 0.0.4. No external library: the data plane only needs these three types.
 *
 * Hot-path rule: `labels(...)` walks one nested Map per label value and returns a mutable cell;
 * label text is built once, when a label combination is first seen, never per call.
 */

/** A label value; a label must always be passed with the same JS type (200 and "200" differ). */
export type LabelValue = string | number;

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Escape a label value: backslash, double quote and line feed (exposition format 0.0.4). */
export function escapeLabelValue(value: string): string {
  return value.replace(/[\\"\n]/g, (ch) => ch === "\n" ? "\\n" : "\\" + ch);
}

/** Escape HELP text: backslash and line feed. */
export function escapeHelp(text: string): string {
  return text.replace(/[\\\n]/g, (ch) => ch === "\n" ? "\\n" : "\\\\");
}

/** A sample value as Prometheus reads it (`NaN`, `+Inf`, `-Inf`, or a JS number). */
export function formatValue(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return String(value);
}

/** A counter series: only goes up. */
export class CounterCell {
  value = 0;
  /** Add `n` (default 1); negative amounts are ignored (counters never go down). */
  inc(n = 1): void {
    if (n > 0) this.value += n;
  }
}

/** A gauge series: any value. */
export class GaugeCell {
  value = 0;
  /** Add `n` (default 1). */
  inc(n = 1): void {
    this.value += n;
  }
  /** Subtract `n` (default 1). */
  dec(n = 1): void {
    this.value -= n;
  }
  /** Set the value. */
  set(v: number): void {
    this.value = v;
  }
}

/** A histogram series: per-bucket counts (not cumulative until rendered), sum and count. */
export class HistogramCell {
  readonly bounds: readonly number[];
  /** counts[i] = observations in (bounds[i-1], bounds[i]]; larger ones are only in `count`. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(bounds: readonly number[]) {
    this.bounds = bounds;
    this.counts = new Float64Array(bounds.length);
  }

  /** Record one observation. */
  observe(v: number): void {
    const bounds = this.bounds;
    // Linear scan: ~13 bounds, and most requests land in the first few.
    for (let i = 0; i < bounds.length; i++) {
      if (v <= bounds[i]) {
        this.counts[i]++;
        break;
      }
    }
    this.sum += v;
    this.count++;
  }
}

interface Series<C> {
  /** Rendered label pairs without braces, e.g. `pipeline="a",status="200"` ("" when unlabeled). */
  labels: string;
  /** The label values, in label-name order. */
  values: readonly LabelValue[];
  cell: C;
}

/** One metric family: a name, help text, label names and one cell per label combination. */
export abstract class Family<C> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  abstract readonly type: "counter" | "gauge" | "histogram";
  readonly #root = new Map<LabelValue, unknown>();
  readonly #series: Series<C>[] = [];

  constructor(name: string, help: string, labelNames: readonly string[]) {
    if (!METRIC_NAME.test(name)) throw new Error(`invalid metric name ${JSON.stringify(name)}`);
    for (const l of labelNames) {
      if (!LABEL_NAME.test(l) || l.startsWith("__")) {
        throw new Error(`invalid label name ${JSON.stringify(l)} on ${name}`);
      }
    }
    if (new Set(labelNames).size !== labelNames.length) {
      throw new Error(`duplicate label name on ${name}`);
    }
    this.name = name;
    this.help = help;
    this.labelNames = labelNames;
  }

  /** The cell for these label values (one per label name, in order), created on first use. */
  labels(...values: LabelValue[]): C {
    const n = this.labelNames.length;
    if (values.length !== n) {
      throw new Error(`${this.name} takes ${n} label value(s), got ${values.length}`);
    }
    if (n === 0) return this.#leaf(this.#root, "", values);
    let map = this.#root;
    for (let i = 0; i < n - 1; i++) {
      let next = map.get(values[i]) as Map<LabelValue, unknown> | undefined;
      if (!next) {
        next = new Map();
        map.set(values[i], next);
      }
      map = next;
    }
    return this.#leaf(map, values[n - 1], values);
  }

  /**
   * `labels(a)`, `labels(a, b)`, `labels(a, b, c)` without the rest parameter's array: the hot
   * path of every request finds its existing cell allocating nothing.
   */
  labels1(a: LabelValue): C {
    return (this.labelNames.length === 1 ? this.#root.get(a) as C | undefined : undefined) ??
      this.labels(a);
  }

  /** See {@link labels1}. */
  labels2(a: LabelValue, b: LabelValue): C {
    const found = this.labelNames.length === 2
      ? (this.#root.get(a) as Map<LabelValue, unknown> | undefined)?.get(b) as C | undefined
      : undefined;
    return found ?? this.labels(a, b);
  }

  /** See {@link labels1}. */
  labels3(a: LabelValue, b: LabelValue, c: LabelValue): C {
    const found = this.labelNames.length === 3
      ? ((this.#root.get(a) as Map<LabelValue, unknown> | undefined)?.get(b) as
        | Map<LabelValue, unknown>
        | undefined)?.get(c) as C | undefined
      : undefined;
    return found ?? this.labels(a, b, c);
  }

  #leaf(map: Map<LabelValue, unknown>, key: LabelValue, values: LabelValue[]): C {
    const found = map.get(key) as C | undefined;
    if (found !== undefined) return found;
    const cell = this.newCell();
    const labels = this.labelNames.map((l, i) => `${l}="${escapeLabelValue(String(values[i]))}"`)
      .join(",");
    map.set(key, cell);
    this.#series.push({ labels, values: [...values], cell });
    return cell;
  }

  /** Every series so far: its label values and its cell (for summaries; not on a hot path). */
  series(): { values: readonly LabelValue[]; cell: C }[] {
    return this.#series.map((s) => ({ values: s.values, cell: s.cell }));
  }

  /** Every series as numbers (a worker's figures, sent to the main thread to be added there). */
  data(): { values: readonly LabelValue[]; data: number[] }[] {
    return this.#series.map((s) => ({ values: s.values, data: this.cellData(s.cell) }));
  }

  /** Adds `data` (what `data()` gave, or a difference of two) to the series of `values`. */
  add(values: readonly LabelValue[], data: readonly number[]): void {
    this.addToCell(this.labels(...values), data);
  }

  /** A fresh cell for a new label combination. */
  protected abstract newCell(): C;

  /** The cell's figures as numbers. */
  protected abstract cellData(cell: C): number[];

  /** Adds figures in the shape `cellData` gives. */
  protected abstract addToCell(cell: C, data: readonly number[]): void;

  /** Sample lines of one series. */
  protected abstract renderSeries(labels: string, cell: C, out: string[]): void;

  /** Append HELP, TYPE and every sample line to `out`. */
  render(out: string[]): void {
    out.push(`# HELP ${this.name} ${escapeHelp(this.help)}`);
    out.push(`# TYPE ${this.name} ${this.type}`);
    for (const s of this.#series) this.renderSeries(s.labels, s.cell, out);
  }
}

/** A counter family. */
export class Counter extends Family<CounterCell> {
  readonly type = "counter";
  protected newCell(): CounterCell {
    return new CounterCell();
  }
  protected cellData(cell: CounterCell): number[] {
    return [cell.value];
  }
  protected addToCell(cell: CounterCell, data: readonly number[]): void {
    cell.inc(data[0]);
  }
  protected renderSeries(labels: string, cell: CounterCell, out: string[]): void {
    out.push(`${this.name}${labels ? `{${labels}}` : ""} ${formatValue(cell.value)}`);
  }
}

/** A gauge family. */
export class Gauge extends Family<GaugeCell> {
  readonly type = "gauge";
  protected newCell(): GaugeCell {
    return new GaugeCell();
  }
  protected cellData(cell: GaugeCell): number[] {
    return [cell.value];
  }
  protected addToCell(cell: GaugeCell, data: readonly number[]): void {
    cell.inc(data[0]);
  }
  protected renderSeries(labels: string, cell: GaugeCell, out: string[]): void {
    out.push(`${this.name}${labels ? `{${labels}}` : ""} ${formatValue(cell.value)}`);
  }
}

/** A histogram family with fixed bucket upper bounds (the `+Inf` bucket is implicit). */
export class Histogram extends Family<HistogramCell> {
  readonly type = "histogram";
  readonly buckets: readonly number[];

  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    buckets: readonly number[],
  ) {
    super(name, help, labelNames);
    if (labelNames.includes("le")) throw new Error(`histogram ${name} cannot use the label "le"`);
    for (let i = 0; i < buckets.length; i++) {
      if (!Number.isFinite(buckets[i]) || (i > 0 && buckets[i] <= buckets[i - 1])) {
        throw new Error(`histogram ${name}: buckets must be finite and strictly increasing`);
      }
    }
    this.buckets = [...buckets];
  }

  protected newCell(): HistogramCell {
    return new HistogramCell(this.buckets);
  }
  /** `[...bucket counts, sum, count]`. */
  protected cellData(cell: HistogramCell): number[] {
    return [...cell.counts, cell.sum, cell.count];
  }
  protected addToCell(cell: HistogramCell, data: readonly number[]): void {
    const n = cell.counts.length;
    for (let i = 0; i < n; i++) cell.counts[i] += data[i];
    cell.sum += data[n];
    cell.count += data[n + 1];
  }

  protected renderSeries(labels: string, cell: HistogramCell, out: string[]): void {
    const pre = labels ? labels + "," : "";
    let cumulative = 0;
    for (let i = 0; i < cell.bounds.length; i++) {
      cumulative += cell.counts[i];
      out.push(`${this.name}_bucket{${pre}le="${formatValue(cell.bounds[i])}"} ${cumulative}`);
    }
    out.push(`${this.name}_bucket{${pre}le="+Inf"} ${cell.count}`);
    const braces = labels ? `{${labels}}` : "";
    out.push(`${this.name}_sum${braces} ${formatValue(cell.sum)}`);
    out.push(`${this.name}_count${braces} ${cell.count}`);
  }
}

/** A set of metric families rendered together. */
export class Registry {
  readonly #families: Family<unknown>[] = [];
  readonly #names = new Set<string>();
  readonly #collectors: (() => void)[] = [];

  /** Register a counter family. */
  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.#add(new Counter(name, help, labelNames));
  }

  /** Register a gauge family. */
  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    return this.#add(new Gauge(name, help, labelNames));
  }

  /** Register a histogram family. */
  histogram(
    name: string,
    help: string,
    labelNames: readonly string[],
    buckets: readonly number[],
  ): Histogram {
    return this.#add(new Histogram(name, help, labelNames, buckets));
  }

  /** Run `fn` before every render (values read at scrape time, e.g. memory). */
  onCollect(fn: () => void): void {
    this.#collectors.push(fn);
  }

  /** Every family in text exposition format 0.0.4, ending with a line feed. */
  render(): string {
    for (const fn of this.#collectors) fn();
    const out: string[] = [];
    for (const f of this.#families) f.render(out);
    return out.join("\n") + "\n";
  }

  #add<F extends Family<unknown>>(family: F): F {
    if (this.#names.has(family.name)) throw new Error(`metric ${family.name} already registered`);
    this.#names.add(family.name);
    this.#families.push(family);
    return family;
  }
}
