#!/usr/bin/env node
// The console's end-to-end tests drive a real Chromium (Debian's `chromium` package, through playwright-core:
// no browser download, which cannot work everywhere). Without one they are skipped, in one line that says how to
// enable them; with one they run with jest (arguments are passed on).
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { createRequire } from 'node:module';

const candidates = process.env.CHROMIUM_PATH
  ? [process.env.CHROMIUM_PATH]
  : ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable'];
const executable = candidates.find((file) => {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
});

if (!executable) {
  const why = process.env.CHROMIUM_PATH
    ? `CHROMIUM_PATH=${process.env.CHROMIUM_PATH} is not an executable`
    : 'no Chromium found';
  console.log(
    `console e2e tests skipped: ${why}; enable them with \`apt-get install chromium\` or CHROMIUM_PATH=/path/to/chrome`,
  );
  process.exit(0);
}

const jest = createRequire(import.meta.url).resolve('jest/bin/jest');
const result = spawnSync(process.execPath, [jest, ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: { ...process.env, CHROMIUM_PATH: executable },
});
process.exit(result.status ?? 1);
