import { sendEvent } from './send';

describe('sendEvent', () => {
  it("cuts off a host name's lookup that never answers at the attempt's timeout, as a failed attempt", async () => {
    const neverAnswers = () => new Promise<Array<{ address: string; family: number }>>(() => undefined);
    const outcome = await sendEvent('https://hooks.example.com/x', {}, '{}', {
      allowPrivateUrls: false,
      lookup: neverAnswers,
      timeoutMs: 50,
    });
    expect(outcome).toMatchObject({
      ok: false,
      statusCode: null,
      error: "no response within 0.05 s (the host name's lookup)",
    });
  });
});
