import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the old generation grow past what the last full GC kept, before it marks again: 50%.
 *
 * V8 picks that factor itself, between 1.1 and 4.0 by how fast its GC runs against the program, and on a machine
 * with gigabytes to spare it takes up to 4.0: a server that keeps little live then peaks at several times that in
 * RSS. At 1.5 the peak is far lower for a few more full GCs (the figures: docs/benchmarks.md, Memory).
 *
 * The flag is read at every GC, so the process sets it itself, first thing (main.ts and worker.ts import this
 * module before anything else): one place, and no start command to keep in step. V8 sizes the young generation
 * when the process starts, so `--max-semi-space-size` cannot be set this way and stays in the start command.
 */
export const HEAP_GROWING_PERCENT = 50;

/** The flag to set, or undefined when the operator set one of their own (a node flag, or NODE_OPTIONS). */
export function heapGrowingFlag(execArgv: readonly string[], nodeOptions = ''): string | undefined {
  const own = [...execArgv, ...nodeOptions.split(/\s+/)].some((arg) => /^--heap[-_]growing[-_]percent\b/.test(arg));
  return own ? undefined : `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;
}

const flag = heapGrowingFlag(process.execArgv, process.env.NODE_OPTIONS);
if (flag) setFlagsFromString(flag);
