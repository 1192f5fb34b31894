import { rmSync } from 'node:fs';

export default async function globalTeardown(): Promise<void> {
  const template = process.env.WORKS_API_PGLITE_TEMPLATE;
  if (template) rmSync(template, { force: true });
}
