/** One sample of a scrape: `name{label="value",...} 12.5`. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text format (what prom-client writes: no timestamps, escaped label values). */
export function parseScrape(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
      labels[key!] = value!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of the samples of `name` whose labels include `labels` (0 when there is none). */
export function total(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value))
    .reduce((sum, s) => sum + s.value, 0);
}

/** Whether a series exists at all. */
export const has = (samples: Sample[], name: string): boolean => samples.some((s) => s.name === name);

/**
 * Checks a histogram's series for one label set: buckets cumulative and ending at +Inf with the count, and returns
 * its count and sum (both 0 before its first observation).
 */
export function histogram(
  samples: Sample[],
  name: string,
  labels: Record<string, string> = {},
): { count: number; sum: number } {
  const matches = (s: Sample) => Object.entries(labels).every(([key, value]) => s.labels[key] === value);
  const buckets = samples.filter((s) => s.name === `${name}_bucket` && matches(s));
  const count = total(samples, `${name}_count`, labels);
  const sum = total(samples, `${name}_sum`, labels);
  if (buckets.length === 0) return { count: 0, sum: 0 }; // no observation yet for these labels
  const bound = (s: Sample) => (s.labels.le === '+Inf' ? Infinity : Number(s.labels.le));
  const ordered = [...buckets].sort((a, b) => bound(a) - bound(b));
  for (let i = 1; i < ordered.length; i++) {
    if (ordered[i]!.value < ordered[i - 1]!.value) throw new Error(`${name}: buckets are not cumulative`);
  }
  if (ordered.at(-1)!.labels.le !== '+Inf' || ordered.at(-1)!.value !== count)
    throw new Error(`${name}: the +Inf bucket (${ordered.at(-1)!.value}) is not the count (${count})`);
  return { count, sum };
}
