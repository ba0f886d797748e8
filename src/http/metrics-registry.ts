/**
 * A tiny metrics registry rendering the Prometheus text exposition format (version 0.0.4):
 * counters, gauges and histograms with labels, `# HELP` and `# TYPE` lines. One registry per
 * handler, nothing global; collectors refresh gauges (e.g. runs by status) just before a scrape.
 */

export type Labels = Readonly<Record<string, string>>;

interface Family {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  render(): string[];
}

export interface Counter {
  inc(labels?: Labels, by?: number): void;
  get(labels?: Labels): number;
}

export interface Gauge {
  set(value: number, labels?: Labels): void;
  /** Drops every labelled value (before a collector sets the current ones). */
  reset(): void;
}

export interface Histogram {
  observe(value: number, labels?: Labels): void;
  /** Observations so far (all label sets). */
  count(): number;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

/** Default buckets for millisecond latencies: 0.5 ms … 10 s. */
export const MS_BUCKETS: readonly number[] = [
  0.5, 1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000,
];

export class MetricsRegistry {
  private readonly families = new Map<string, Family>();
  private readonly collectors: Array<() => Promise<void> | void> = [];

  counter(name: string, help: string): Counter {
    const values = new Map<string, { labels: Labels; value: number }>();
    this.add({
      name,
      help,
      type: 'counter',
      render: () => [...values.values()].map((v) => `${name}${labelText(v.labels)} ${formatNumber(v.value)}`),
    });
    return {
      inc(labels = {}, by = 1) {
        const key = labelKey(labels);
        const entry = values.get(key) ?? { labels, value: 0 };
        entry.value += by;
        values.set(key, entry);
      },
      get(labels = {}) {
        return values.get(labelKey(labels))?.value ?? 0;
      },
    };
  }

  gauge(name: string, help: string): Gauge {
    const values = new Map<string, { labels: Labels; value: number }>();
    this.add({
      name,
      help,
      type: 'gauge',
      render: () => [...values.values()].map((v) => `${name}${labelText(v.labels)} ${formatNumber(v.value)}`),
    });
    return {
      set(value, labels = {}) {
        values.set(labelKey(labels), { labels, value });
      },
      reset() {
        values.clear();
      },
    };
  }

  histogram(name: string, help: string, buckets: readonly number[] = MS_BUCKETS): Histogram {
    const bounds = [...buckets].sort((a, b) => a - b);
    const series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
    this.add({
      name,
      help,
      type: 'histogram',
      render: () => {
        const lines: string[] = [];
        for (const s of series.values()) {
          let cumulative = 0;
          bounds.forEach((le, i) => {
            cumulative += s.counts[i] ?? 0;
            lines.push(`${name}_bucket${labelText({ ...s.labels, le: formatNumber(le) })} ${cumulative}`);
          });
          lines.push(`${name}_bucket${labelText({ ...s.labels, le: '+Inf' })} ${s.count}`);
          lines.push(`${name}_sum${labelText(s.labels)} ${formatNumber(s.sum)}`);
          lines.push(`${name}_count${labelText(s.labels)} ${s.count}`);
        }
        return lines;
      },
    });
    return {
      observe(value, labels = {}) {
        if (!Number.isFinite(value)) return;
        const key = labelKey(labels);
        const s = series.get(key) ?? { labels, counts: bounds.map(() => 0), sum: 0, count: 0 };
        series.set(key, s);
        const i = bounds.findIndex((le) => value <= le);
        if (i >= 0) s.counts[i] = (s.counts[i] ?? 0) + 1;
        s.sum += value;
        s.count += 1;
      },
      count() {
        let n = 0;
        for (const s of series.values()) n += s.count;
        return n;
      },
    };
  }

  /** Runs before every render, to set gauges from current state. */
  collect(fn: () => Promise<void> | void): void {
    this.collectors.push(fn);
  }

  async render(): Promise<string> {
    for (const c of this.collectors) await c();
    const out: string[] = [];
    for (const f of this.families.values()) {
      out.push(`# HELP ${f.name} ${f.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`);
      out.push(`# TYPE ${f.name} ${f.type}`);
      out.push(...f.render());
    }
    return `${out.join('\n')}\n`;
  }

  private add(family: Family): void {
    if (!NAME.test(family.name))
      throw new TypeError(`metric name ${JSON.stringify(family.name)} is not valid`);
    if (this.families.has(family.name)) throw new TypeError(`metric ${family.name} is already registered`);
    this.families.set(family.name, family);
  }
}

function labelKey(labels: Labels): string {
  return JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function labelText(labels: Labels): string {
  const entries = Object.entries(labels);
  if (entries.length === 0) return '';
  const parts = entries.map(
    ([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')}"`,
  );
  return `{${parts.join(',')}}`;
}

function formatNumber(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Number.POSITIVE_INFINITY) return '+Inf';
  if (n === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(n);
}
