import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';

/** Where the tests leave screenshots for a person to look at (git-ignored). */
export const ARTIFACTS = path.resolve(__dirname, '../../e2e-artifacts');

export const DESKTOP = { width: 1400, height: 900 };
export const PHONE = { width: 375, height: 812 };

/**
 * Debian's Chromium, found by scripts/e2e.mjs (CHROMIUM_PATH). As root it needs --no-sandbox; on a closed network
 * the background-networking flags stop it from trying (and failing) to reach Google's services.
 */
export async function launchChromium(): Promise<Browser> {
  const executablePath = process.env.CHROMIUM_PATH;
  if (!executablePath)
    throw new Error('CHROMIUM_PATH is not set: run these tests with `pnpm test` (scripts/e2e.mjs finds Chromium)');
  mkdirSync(ARTIFACTS, { recursive: true });
  return chromium.launch({
    executablePath,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
}

/** Everything the page reports as broken: uncaught errors, console errors (a CSP violation is one of them). */
export function watchForErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console error: ${message.text()}`);
  });
  return errors;
}

/** A screenshot of what is on screen, named for the page and the width. */
export async function screenshot(page: Page, name: string): Promise<void> {
  const width = page.viewportSize()?.width ?? 0;
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}-${width}.png`), fullPage: true });
}

const axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: number;
}

/**
 * An axe-core scan of the page as it is (WCAG 2.0–2.2 A and AA, and best practices). Injected through the
 * DevTools protocol, which the page's CSP does not govern, so the app runs under its real policy.
 */
export async function axeScan(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource);
  return page.evaluate(async () => {
    type Result = { id: string; impact: string | null; help: string; nodes: unknown[] };
    const axe = (
      window as unknown as {
        axe: { run(context: Document, options: object): Promise<{ violations: Result[]; passes: Result[] }> };
      }
    ).axe;
    const result = await axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] },
    });
    // A scan that checked nothing would pass anything.
    if (result.passes.length === 0) throw new Error('axe-core ran no check on this page');
    return result.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      help: violation.help,
      nodes: violation.nodes.length,
    }));
  });
}
