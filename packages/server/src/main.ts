import type { Server } from 'node:http';
import { createApp } from './app';
import { startClusterPrimary } from './cluster';
import { ConfigError, describeDatabase, loadConfig } from './config';
import { openDatabase } from './db/client';

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const database = await openDatabase(config.database);
  const app = createApp({
    db: database.prisma,
    adminToken: config.adminToken,
    onBug: (error) => console.error('internal error', error),
  });
  const server = app.listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));

  const url = `http://${config.host}:${addressPort(server)}`;
  console.log(`works-api listening on ${url}/v1 (database: ${describeDatabase(config.database)})`);
  console.log(
    config.adminToken
      ? `Create a user and an API key: curl -X POST ${url}/v1/admin/users -H "Authorization: Bearer $ADMIN_TOKEN" -H "Content-Type: application/json" -d '{"email":"you@example.com","firstName":"Ada","lastName":"Lovelace"}'`
      : 'ADMIN_TOKEN is not set, so POST /v1/admin/users is off: restart with ADMIN_TOKEN=<16+ characters> to create users and keys.',
  );

  const stop = async (signal: string) => {
    console.log(`${signal}: closing`);
    server.close();
    server.closeIdleConnections();
    await new Promise((resolve) => server.once('close', resolve));
    await database.close();
    process.exit(0);
  };
  process.once('SIGTERM', (signal) => void stop(signal));
  process.once('SIGINT', (signal) => void stop(signal));
}

const addressPort = (server: Server): number => {
  const address = server.address();
  return typeof address === 'object' && address ? address.port : 0;
};

if (!startClusterPrimary(process.env)) {
  main().catch((error: unknown) => {
    console.error(error instanceof ConfigError ? `works-api: invalid configuration: ${error.message}` : error);
    process.exit(1);
  });
}
