import { type Database, openDatabase } from '@works-api/prisma';
import { parseEncryptionKeys } from '@works-api/prisma';
import { smtpTransport } from '../../src/mail/transport';
import { eventually } from '../support/load';
import { type Receiver, startReceiver } from '../support/receiver';
import { type ScratchDatabase, scratchDatabase } from '../support/scratch-database';
import { startTestServer, TEST_ENCRYPTION_KEYS, type TestServer, type TestUser } from '../support/server';
import { type SmtpSink, startSmtpSink } from '../support/smtp-sink';

/**
 * The webhook dispatcher and the mail sender through a failover: the database goes away after a webhook or an
 * email went out and before its outcome was written. The outcome is written once the database is back (while the
 * claim's 60 s lease holds), so nothing is sent twice, and both resume by themselves. A scratch PostgreSQL
 * database that refuses connections for a moment plays the failover (the pool's connections end with it).
 */
const url = process.env.DATABASE_URL;
const onPostgres = url ? describe : describe.skip;

onPostgres('outboxes through a failover', () => {
  let scratch: ScratchDatabase;
  let database: Database;
  let receiver: Receiver;
  let sink: SmtpSink;
  let server: TestServer;
  let user: TestUser;
  let release: () => void;
  let gate: Promise<void>;

  beforeAll(async () => {
    scratch = await scratchDatabase(url!, 'works_outbox_failover');
    database = await openDatabase({
      kind: 'postgres',
      url: scratch.url,
      encryptionKeys: parseEncryptionKeys(TEST_ENCRYPTION_KEYS),
    });
    receiver = await startReceiver((_received, _index, res) => void gate.then(() => res.end('ok')));
    sink = await startSmtpSink();
    server = await startTestServer({
      database,
      webhooks: { pollIntervalMs: 100 },
      mail: { transport: smtpTransport(sink.url), pollIntervalMs: 100 },
    });
    user = await server.createUser('failover');
  });
  afterAll(async () => {
    await server?.close();
    await receiver?.close();
    await sink?.close();
    await scratch?.drop();
  });
  beforeEach(() => {
    gate = new Promise<void>((resolve) => (release = resolve));
  });

  /**
   * The database goes away (every session ended, none accepted) while the send is held; the send then ends, its
   * outcome cannot be written (`failedToRecord` says when that happened), and the database comes back, well
   * within the lease.
   */
  async function failoverDuringTheSend(sent: () => boolean, failedToRecord: string) {
    await eventually(async () => expect(sent()).toBe(true));
    await scratch.disconnectEveryone({ allowNew: false });
    await eventually(async () => expect(database.poolStats!().total).toBe(0));
    release();
    await eventually(async () => expect(server.logs.some((line) => line.msg === failedToRecord)).toBe(true));
    await scratch.allowConnections();
  }

  async function newRequest(email: string) {
    const tenant = (await server.callAs(user, 'POST', '/v1/tenants', { name: 'Failover' })).body.tenant;
    const work = (await server.callAs(user, 'POST', `/v1/tenants/${tenant.id}/works`, { name: 'W' })).body.work;
    return {
      tenant,
      work,
      create: () =>
        server.callAs(user, 'POST', `/v1/tenants/${tenant.id}/works/${work.id}/requests`, {
          title: 'R',
          recipient: { email },
        }),
    };
  }

  it('a webhook delivered just before the database went away is recorded once it is back, not sent again', async () => {
    const { tenant, create } = await newRequest('hook@example.com');
    sink.holdUntil(null);
    const endpoint = (
      await server.callAs(user, 'POST', `/v1/tenants/${tenant.id}/webhook-endpoints`, {
        url: receiver.url,
        eventTypes: ['request.created'],
      })
    ).body.webhookEndpoint;
    expect((await create()).status).toBe(201);
    await failoverDuringTheSend(() => receiver.received.length === 1, 'webhooks: recording attempts failed');

    await eventually(
      async () => {
        const deliveries = await server.callAs(
          user,
          'GET',
          `/v1/tenants/${tenant.id}/webhook-endpoints/${endpoint.id}/deliveries`,
        );
        expect(deliveries.body.deliveries.edges.map((edge) => edge.node)).toEqual([
          expect.objectContaining({ status: 'delivered', attempts: 1 }),
        ]);
      },
      { timeoutMs: 15_000, pauseMs: 100 },
    );
    expect(receiver.received).toHaveLength(1);
  });

  it('an email the mail server accepted just before the database went away is recorded once it is back, not sent again', async () => {
    gate = Promise.resolve();
    const mailGate = new Promise<void>((resolve) => (release = resolve));
    sink.holdUntil(mailGate);
    const before = sink.received.length;
    const { tenant, work, create } = await newRequest('mail@example.com');
    const request = (await create()).body.request;
    await failoverDuringTheSend(
      () => sink.received.length === before + 1,
      'mail: recording the outcome failed; retrying while the lease holds',
    );

    await eventually(
      async () => {
        const read = await server.callAs(
          user,
          'GET',
          `/v1/tenants/${tenant.id}/works/${work.id}/requests/${request.id}`,
        );
        expect(read.body.request.emailDelivery).toMatchObject({ status: 'sent' });
      },
      { timeoutMs: 15_000, pauseMs: 100 },
    );
    expect(sink.received.filter((mail) => mail.to.includes('mail@example.com'))).toHaveLength(1);
    sink.holdUntil(null);
  });
});
