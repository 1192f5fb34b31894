// Generates a TypeScript client, its types and Zod schemas from an OpenAPI document with @hey-api/openapi-ts, as
// a partner would: `node hey-api-generate.mjs <input file or URL> <output folder>`. A child process, because the
// generator is an ES module and the tests run as CommonJS.
import { createClient } from '@hey-api/openapi-ts';

const [input, output] = process.argv.slice(2);
await createClient({
  input,
  output: { path: output },
  // The Zod plugin reads `format: date-time` as Zod's default does (UTC only) unless told that offsets are part of
  // it, as RFC 3339 and this contract say (openapi/README.md, "Generated Zod").
  plugins: ['@hey-api/typescript', '@hey-api/client-fetch', { name: 'zod', dates: { offset: true } }],
  // No log file in the working folder: a failure is reported on stderr, to the test.
  logs: { level: 'silent', file: false },
});
