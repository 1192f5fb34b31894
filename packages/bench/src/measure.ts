import { runLoad } from './load';
import type { Options } from './options';
import { runPaced } from './paced';
import { cpuMsOf, rssOf, sampleRss, type Service } from './processes';
import type { Measurement } from './report';
import { type Scenario, scenarios, type Target } from './scenarios';

// How one scenario is measured on one service, and the pool of pending requests the action scenarios use up.

/**
 * Warm-up, a run at full speed, and optionally a paced run: at half that rate (`true`), or at a given rate (the
 * server's half rate, for the baseline: the same offered load). RSS sampled throughout.
 */
export async function measure(
  scenario: Scenario,
  service: Service,
  target: Target,
  options: Options,
  halfRate: boolean | { rps: number },
) {
  const stopSampling = sampleRss(service.pid);
  const poolSize = (durationS: number, expectedRps?: number) =>
    scenario.requestsPerPending
      ? poolFor(service, target, options, scenario.requestsPerPending, durationS, expectedRps)
      : Promise.resolve(undefined);
  const run = async (durationS: number, expectedRps?: number): Promise<Measurement> => {
    const amount = await poolSize(durationS, expectedRps);
    // After the pool top-up, which also runs on this server.
    const cpuBefore = cpuMsOf(service.pid);
    const result = await runLoad({
      url: service.url,
      requests: scenario.requests(target),
      connections: options.connections,
      durationS,
      amount,
    });
    return {
      ...result,
      cpuMsPerRequest: result.requests > 0 ? (cpuMsOf(service.pid) - cpuBefore) / result.requests : undefined,
    };
  };
  const warmup = options.warmupS > 0 ? await run(options.warmupS) : undefined;
  const max = await run(options.durationS, warmup && warmup.requests > 0 ? warmup.rps * 1.5 : undefined);
  let half: (Measurement & { targetRps: number }) | undefined;
  if (halfRate) {
    const targetRps = halfRate === true ? Math.max(1, Math.round(max.rps / 2)) : halfRate.rps;
    await poolSize(options.durationS, targetRps);
    half = {
      ...(await runPaced({
        url: service.url,
        requests: scenario.requests(target),
        rate: targetRps,
        durationS: options.durationS,
      })),
      targetRps,
    };
  }
  max.peakRssBytes = stopSampling();
  return { max, half };
}

/** A just-started server's RSS once start-up has settled: what it holds before the first request. */
export async function idleRss(service: Service): Promise<number | undefined> {
  await new Promise((resolve) => setTimeout(resolve, 3000));
  return rssOf(service.pid);
}

/** The round with the median throughput (all of its figures, so they stay consistent). */
export function median(rounds: Measurement[]): Measurement {
  const sorted = [...rounds].sort((a, b) => a.rps - b.rps);
  const middle = sorted[Math.floor((sorted.length - 1) / 2)]!;
  return rounds.length > 1
    ? { ...middle, rounds: rounds.map((r) => ({ rps: r.rps, cpuMsPerRequest: r.cpuMsPerRequest })) }
    : middle;
}

const createRequest = scenarios.find((s) => s.id === 'create-request')!;
// Until an action scenario's run has been measured, assume actions go this fast.
const FIRST_GUESS_RPS = 1500;

/**
 * The action scenarios need a fresh pending request per `perPending` HTTP requests: tops the target's pool up
 * through the API (unmeasured) when the coming run may need more, and returns the number of requests the run may send.
 */
export async function poolFor(
  service: Service,
  target: Target,
  options: Options,
  perPending: number,
  durationS: number,
  expectedRps = FIRST_GUESS_RPS,
) {
  const { connections } = options;
  const needed = Math.ceil(((expectedRps * durationS) / perPending) * 1.3) + 2 * connections;
  if (target.pool.length < needed) {
    const topUp = await runLoad({
      url: service.url,
      requests: createRequest.requests(target),
      connections,
      durationS: 120,
      amount: Math.max(connections, needed - target.pool.length),
    });
    if (topUp.errors > 0) throw new Error(`creating pending requests failed: ${JSON.stringify(topUp.statusCodes)}`);
  }
  // Whole sets (e.g. confirm + validate pairs) on every connection, leaving a margin for the first request of each.
  return perPending * connections * Math.max(1, Math.floor((target.pool.length - connections) / connections));
}
