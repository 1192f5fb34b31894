import { unwrap } from '@works-api/client';
import { databaseEnv, killAll, removeDataDirs, type ServerProcess, spawnServer } from '../support/process';
import { ADMIN_TOKEN, createUserAt } from '../support/server';
import { type SmtpSink, startSmtpSink } from '../support/smtp-sink';

/**
 * Email across real server processes (`node dist/main.js`) and a real SMTP server on loopback: what a killed
 * process had queued is sent after the restart, each email once. On its own embedded folder only: on a shared
 * PostgreSQL a spawned sender would send every other test file's queued emails too (it cannot be scoped).
 */
const servers: ServerProcess[] = [];
let sink: SmtpSink;
beforeAll(async () => (sink = await startSmtpSink()));
afterAll(async () => {
  await killAll(servers);
  await sink.close();
  removeDataDirs();
});

const apiOn = async (baseUrl: string) => (await createUserAt(baseUrl, 'mail')).client;

const onOwnFolder = process.env.DATABASE_URL ? it.skip : it;
onOwnFolder(
  'sends every email queued before a kill -9 after the restart, each once, and none again',
  async () => {
    const env = {
      ...(await databaseEnv()),
      ADMIN_TOKEN,
      SMTP_URL: sink.url,
      MAIL_FROM: 'works-api <no-reply@works.test>',
      PUBLIC_URL: 'http://works.test',
    };
    // The first process only writes (no sender), so every email is still queued when it is killed.
    const writer = await spawnServer({ ...env, MAIL_SENDER: 'false' });
    servers.push(writer);
    const api = await apiOn(writer.baseUrl);
    const { tenant } = unwrap(await api.createTenant({ body: { name: 'Mail Process Inc' } }));
    const { work } = unwrap(await api.createWork({ params: { path: { tenant_id: tenant.id } }, body: { name: 'W' } }));
    const path = { tenant_id: tenant.id, work_id: work.id };
    const recipients = Array.from({ length: 10 }, (_, i) => `killed-${i}@example.com`);
    for (const email of recipients)
      unwrap(await api.createRequest({ params: { path }, body: { title: 'T', recipient: { email } } }));
    writer.child.kill('SIGKILL');
    await writer.exited;
    expect(sink.received).toHaveLength(0);

    const sender = await spawnServer({ ...env, MAIL_SENDER: 'true', MAIL_POLL_INTERVAL_MS: '100' });
    servers.push(sender);
    await sink.waitFor(10, 30_000);
    sender.child.kill('SIGKILL');
    await sender.exited;

    // A third process, after the emails were sent: it sends only the one new email, none of the earlier ones again.
    const third = await spawnServer({ ...env, MAIL_SENDER: 'true', MAIL_POLL_INTERVAL_MS: '100' });
    servers.push(third);
    const again = await apiOn(third.baseUrl);
    const { tenant: other } = unwrap(await again.createTenant({ body: { name: 'After Inc' } }));
    const { work: otherWork } = unwrap(
      await again.createWork({ params: { path: { tenant_id: other.id } }, body: { name: 'W' } }),
    );
    unwrap(
      await again.createRequest({
        params: { path: { tenant_id: other.id, work_id: otherWork.id } },
        body: { title: 'After', recipient: { email: 'after@example.com' } },
      }),
    );
    await sink.waitFor(11, 30_000);
    const to = sink.received.flatMap((mail) => mail.to).sort();
    expect(to).toEqual([...recipients, 'after@example.com'].sort());
    for (const mail of sink.received) expect(mail.parsed.text).toMatch(/http:\/\/works\.test\/r\/[A-Za-z0-9_-]{43}/);
  },
  120_000,
);
