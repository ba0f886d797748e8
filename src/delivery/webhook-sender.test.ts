import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../time/index.ts';
import {
  type Handler,
  type LocalReceiver,
  type ReceivedRequest,
  startReceiver,
} from './fixtures/local-receiver.ts';
import {
  parseWebhookTarget,
  type SendWebhookInput,
  sendWebhook,
  verifySignature,
  type WebhookOutcome,
  webhookRetryDelay,
} from './index.ts';

const SECRET = 'whsec_test_4f1b';
const START = Date.UTC(2026, 2, 1, 9, 0, 0);
const payload = { type: 'tool_result', run_id: 'run_1', result: { answer: 42, text: '你好' } };

let receivers: LocalReceiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  receivers = [];
});

async function receiver(handler: Handler): Promise<LocalReceiver> {
  const r = await startReceiver(handler);
  receivers.push(r);
  return r;
}

function answer(status: number, headers: Record<string, string> = {}, body = ''): Handler {
  return (_req, res) => {
    res.writeHead(status, headers);
    res.end(body);
  };
}

/** A receiver that checks the signature with its own clock and answers 401 when it fails. */
function verifyingHandler(secret: string, clock: ManualClock, checks: unknown[]): Handler {
  return (req: ReceivedRequest, res: ServerResponse) => {
    const check = verifySignature({
      secret,
      header: req.headers['baton-signature'] as string | undefined,
      body: req.raw,
      nowMs: clock.now(),
    });
    checks.push(check);
    res.writeHead(check.ok ? 204 : 401);
    res.end(check.ok ? undefined : JSON.stringify(check));
  };
}

function input(url: string, clock: ManualClock, extra: Partial<SendWebhookInput> = {}): SendWebhookInput {
  return {
    url,
    secret: SECRET,
    body: payload,
    idempotencyKey: 'run_1:tool_result:webhook:reports',
    deliveryId: 'dlv_1',
    nowMs: clock.now(),
    clock,
    // The receivers here are on 127.0.0.1; the address guard has its own tests below.
    allowPrivateNetwork: true,
    ...extra,
  };
}

describe('sendWebhook against a real local receiver', () => {
  it('delivers a signed JSON POST that the receiver verifies, with the idempotency key and delivery id', async () => {
    const clock = new ManualClock(START);
    const checks: unknown[] = [];
    const r = await receiver(verifyingHandler(SECRET, clock, checks));
    const [outcome, req] = await Promise.all([sendWebhook(input(r.url, clock)), r.nextRequest()]);

    expect(outcome).toMatchObject({ ok: true, status: 204 });
    expect(checks).toEqual([{ ok: true }]);
    expect(req.method).toBe('POST');
    expect(req.path).toBe('/hooks/baton');
    expect(req.headers['idempotency-key']).toBe('run_1:tool_result:webhook:reports');
    expect(req.headers['baton-delivery-id']).toBe('dlv_1');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['user-agent']).toBe('baton');
    expect(req.headers['baton-signature']).toMatch(new RegExp(`^t=${START / 1000},v1=[0-9a-f]{64}$`));
    expect(JSON.parse(req.raw.toString('utf8'))).toEqual(payload);
  });

  it('sends the same idempotency key on the retry after a 500, waiting as webhookRetryDelay says', async () => {
    const clock = new ManualClock(START);
    const checks: unknown[] = [];
    const verify = verifyingHandler(SECRET, clock, checks);
    const r = await receiver((req, res) =>
      req.index === 0 ? answer(500, {}, 'db down')(req, res) : verify(req, res),
    );

    const outcomes: WebhookOutcome[] = [];
    const waits: number[] = [];
    for (let attempt = 1; ; attempt++) {
      const outcome = await sendWebhook(input(r.url, clock, { nowMs: clock.now() }));
      outcomes.push(outcome);
      if (outcome.ok || !outcome.retryable) break;
      const wait = webhookRetryDelay(attempt, { retryAfterMs: outcome.retryAfterMs });
      if (wait === undefined) break;
      waits.push(wait);
      await clock.advance(wait);
    }
    const first = await r.nextRequest();
    const second = await r.nextRequest();

    expect(outcomes[0]).toMatchObject({ ok: false, status: 500, retryable: true, reason: 'http_status' });
    expect(outcomes[0]).toMatchObject({ error: 'HTTP 500: db down' });
    expect(outcomes[1]).toMatchObject({ ok: true, status: 204 });
    expect(waits).toEqual([1_000]);
    expect(second.headers['idempotency-key']).toBe(first.headers['idempotency-key']);
    expect(second.headers['baton-delivery-id']).toBe(first.headers['baton-delivery-id']);
    // Each try is signed at its own time, so a receiver's freshness check holds for the retry too.
    expect(second.headers['baton-signature']).toMatch(new RegExp(`^t=${START / 1000 + 1},`));
    expect(checks).toEqual([{ ok: true }]);
  });

  it('treats 429 as retryable and returns retry-after seconds as a hint the schedule honours', async () => {
    const clock = new ManualClock(START);
    const r = await receiver(answer(429, { 'retry-after': '30' }, 'slow down'));
    const outcome = await sendWebhook(input(r.url, clock));

    expect(outcome).toMatchObject({ ok: false, status: 429, retryable: true, retryAfterMs: 30_000 });
    const hint = outcome.ok ? undefined : outcome.retryAfterMs;
    expect(webhookRetryDelay(1, { retryAfterMs: hint })).toBe(30_000);
    expect(webhookRetryDelay(7, { retryAfterMs: hint })).toBe(64_000);
  });

  it('reads a retry-after HTTP date relative to nowMs', async () => {
    const clock = new ManualClock(START);
    const at = new Date(START + 90_000).toUTCString();
    const r = await receiver(answer(503, { 'retry-after': at }));
    const outcome = await sendWebhook(input(r.url, clock));
    expect(outcome).toMatchObject({ ok: false, status: 503, retryable: true, retryAfterMs: 90_000 });
  });

  it.each([408, 500, 502, 503, 504])('treats %i as retryable', async (status) => {
    const clock = new ManualClock(START);
    const r = await receiver(answer(status));
    const outcome = await sendWebhook(input(r.url, clock));
    expect(outcome).toMatchObject({ ok: false, status, retryable: true, reason: 'http_status' });
    expect(outcome).not.toHaveProperty('retryAfterMs');
  });

  it.each([400, 401, 403, 404, 410, 422])('does not retry %i', async (status) => {
    const clock = new ManualClock(START);
    const r = await receiver(answer(status, { 'retry-after': '5' }, '{"error":"bad payload"}'));
    const outcome = await sendWebhook(input(r.url, clock));
    expect(outcome).toMatchObject({
      ok: false,
      status,
      retryable: false,
      error: `HTTP ${status}: {"error":"bad payload"}`,
    });
    expect(outcome).not.toHaveProperty('retryAfterMs');
  });

  it('keeps only a short one-line snippet of a large error body', async () => {
    const clock = new ManualClock(START);
    const r = await receiver(answer(400, {}, `line one\nline two ${'x'.repeat(100_000)}`));
    const outcome = await sendWebhook(input(r.url, clock));
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.error.startsWith('HTTP 400: line one line two xxx')).toBe(true);
    expect(outcome.error.length).toBeLessThanOrEqual(220);
  });

  it('times out on a receiver that never answers (real time, 150 ms)', async () => {
    const r = await receiver(() => {});
    const sent = sendWebhook({
      url: r.url,
      allowPrivateNetwork: true,
      body: payload,
      idempotencyKey: 'k',
      deliveryId: 'd',
      nowMs: START,
      timeoutMs: 150,
    });
    const req = await r.nextRequest();
    const outcome = await sent;
    expect(req.headers['idempotency-key']).toBe('k');
    expect(outcome).toMatchObject({ ok: false, retryable: true, reason: 'timeout' });
    expect(outcome).not.toHaveProperty('status');
  });

  it('times out when the injected clock passes timeoutMs, without real waiting', async () => {
    const clock = new ManualClock(START);
    const r = await receiver(() => {});
    const sent = sendWebhook(input(r.url, clock, { timeoutMs: 60_000 }));
    await r.nextRequest();
    await clock.advance(59_999);
    expect(clock.pendingTimers).toBe(1);
    await clock.advance(1);
    expect(await sent).toMatchObject({ ok: false, retryable: true, reason: 'timeout', durationMs: 60_000 });
    expect(clock.pendingTimers).toBe(0);
  });

  it('fails verification on the receiver when the body is changed on the way', async () => {
    const clock = new ManualClock(START);
    const checks: unknown[] = [];
    const r = await receiver(verifyingHandler(SECRET, clock, checks));
    const tamper: typeof fetch = (url, init) =>
      fetch(url, { ...init, body: String(init?.body).replace('42', '43') });
    const outcome = await sendWebhook(input(r.url, clock, { fetchImpl: tamper }));
    expect(checks).toEqual([{ ok: false, reason: 'signature_mismatch' }]);
    expect(outcome).toMatchObject({ ok: false, status: 401, retryable: false });
  });

  it('fails verification on the receiver when the secrets differ', async () => {
    const clock = new ManualClock(START);
    const checks: unknown[] = [];
    const r = await receiver(verifyingHandler('whsec_other', clock, checks));
    await sendWebhook(input(r.url, clock));
    expect(checks).toEqual([{ ok: false, reason: 'signature_mismatch' }]);
  });

  it('fails verification on the receiver when the signed timestamp is older than five minutes', async () => {
    const clock = new ManualClock(START);
    const checks: unknown[] = [];
    const r = await receiver(verifyingHandler(SECRET, clock, checks));
    await sendWebhook(input(r.url, clock, { nowMs: START - 301_000 }));
    await sendWebhook(input(r.url, clock, { nowMs: START - 300_000 }));
    expect(checks).toEqual([{ ok: false, reason: 'stale_timestamp' }, { ok: true }]);
  });

  it('sends no signature header without a secret', async () => {
    const clock = new ManualClock(START);
    const r = await receiver(answer(200));
    const [outcome, req] = await Promise.all([
      sendWebhook(input(r.url, clock, { secret: undefined })),
      r.nextRequest(),
    ]);
    expect(outcome).toMatchObject({ ok: true, status: 200 });
    expect(req.headers).not.toHaveProperty('baton-signature');
  });

  it('sends a parsed target’s extra headers beside its own', async () => {
    const clock = new ManualClock(START);
    const r = await receiver(answer(202));
    const target = parseWebhookTarget({
      url: r.url,
      headers: { Authorization: 'Bearer abc', 'X-Team': 'ops' },
      allowPrivateNetwork: true,
    });
    const [outcome, req] = await Promise.all([
      sendWebhook(input(target.url, clock, { headers: target.headers, timeoutMs: target.timeoutMs })),
      r.nextRequest(),
    ]);
    expect(outcome).toMatchObject({ ok: true, status: 202 });
    expect(req.headers.authorization).toBe('Bearer abc');
    expect(req.headers['x-team']).toBe('ops');
    expect(req.headers['idempotency-key']).toBe('run_1:tool_result:webhook:reports');
  });

  it('does not follow a redirect, and does not retry it', async () => {
    const clock = new ManualClock(START);
    const r = await receiver(answer(307, { location: 'http://127.0.0.1:1/elsewhere' }));
    const outcome = await sendWebhook(input(r.url, clock));
    expect(outcome).toMatchObject({ ok: false, status: 307, retryable: false, reason: 'redirect' });
    expect(r.count).toBe(1);
  });

  it('reports a refused connection as a retryable network error', async () => {
    const clock = new ManualClock(START);
    const r = await startReceiver(answer(200));
    await r.close();
    const outcome = await sendWebhook(input(r.url, clock));
    expect(outcome).toMatchObject({ ok: false, retryable: true, reason: 'network' });
    if (!outcome.ok) expect(outcome.error).toMatch(/ECONNREFUSED/);
  });

  it('stops when the caller aborts, and says so (retryable, the receiver is not at fault)', async () => {
    const clock = new ManualClock(START);
    const r = await receiver(() => {});
    const controller = new AbortController();
    const sent = sendWebhook(input(r.url, clock, { signal: controller.signal }));
    await r.nextRequest();
    controller.abort(new Error('worker stopping'));
    expect(await sent).toMatchObject({ ok: false, retryable: true, reason: 'aborted' });
    expect(clock.pendingTimers).toBe(0);

    const early = await sendWebhook(input(r.url, clock, { signal: AbortSignal.abort() }));
    expect(early).toMatchObject({ ok: false, retryable: true, reason: 'aborted' });
    expect(r.count).toBe(1);
  });
});

describe('sendWebhook refuses bad input without sending', () => {
  const clock = new ManualClock(START);
  const calls: unknown[] = [];
  const spy: typeof fetch = async (url) => {
    calls.push(url);
    return new Response(null, { status: 200 });
  };
  const base = input('http://127.0.0.1:9/hook', clock, { fetchImpl: spy });

  it.each([
    [
      'an ftp URL',
      { url: 'ftp://example.com/hook' },
      'url must be an absolute http: or https: URL, got "ftp://',
    ],
    ['a relative URL', { url: '/hook' }, 'url must be an absolute http: or https: URL'],
    [
      'credentials in the URL',
      { url: 'https://u:p@example.com/' },
      'url must be a URL without user:password',
    ],
    ['an empty idempotency key', { idempotencyKey: '' }, 'idempotencyKey must be a non-empty string'],
    [
      'a delivery id with a newline',
      { deliveryId: 'a\nb' },
      'deliveryId must be a non-empty string without CR',
    ],
    ['a zero timeout', { timeoutMs: 0 }, 'timeoutMs must be a positive number of milliseconds, got 0'],
    ['a body with a bigint', { body: { n: 1n } }, 'body must be a JSON-serializable value'],
    ['an undefined body', { body: undefined }, 'body must be a JSON-serializable value'],
    [
      'a reserved extra header',
      { headers: { 'Baton-Signature': 'x' } },
      'headers.Baton-Signature must be absent',
    ],
    ['an empty secret', { secret: '' }, 'secret must be a non-empty string'],
  ] as const)('%s', async (_name, change, message) => {
    const outcome = await sendWebhook({ ...base, ...change } as SendWebhookInput);
    expect(outcome).toMatchObject({ ok: false, retryable: false, reason: 'invalid_request' });
    if (!outcome.ok) expect(outcome.error.startsWith(message)).toBe(true);
    expect(calls).toEqual([]);
  });

  it('sends when the input is good (the spy is reachable)', async () => {
    expect(await sendWebhook(base)).toMatchObject({ ok: true, status: 200 });
    expect(calls).toHaveLength(1);
  });
});

describe('sendWebhook refuses private addresses unless allowed (issue 11 item 8)', () => {
  const clock = new ManualClock(START);
  const calls: unknown[] = [];
  const spy: typeof fetch = async (url) => {
    calls.push(url);
    return new Response(null, { status: 200 });
  };
  const send = (url: string, addresses: string[], allow?: boolean) =>
    sendWebhook({
      ...input(url, clock, { fetchImpl: spy }),
      allowPrivateNetwork: allow ?? false,
      resolveHost: async () => addresses,
    });

  it('refuses a literal private address before sending, for good', async () => {
    const outcome = await send('http://169.254.169.254/latest/meta-data/', []);
    expect(outcome).toMatchObject({ ok: false, retryable: false, reason: 'invalid_request' });
    expect(calls).toEqual([]);
  });

  it('refuses a public-looking name that resolves to a private address, and names both', async () => {
    for (const address of ['127.0.0.1', '10.0.0.7', '::1', '::ffff:169.254.169.254']) {
      const outcome = await send('https://hooks.example.com/x', ['93.184.216.34', address]);
      expect(outcome).toMatchObject({ ok: false, retryable: false, reason: 'private_address' });
      if (!outcome.ok) expect(outcome.error).toContain(`hooks.example.com resolves to ${address}`);
    }
    expect(calls).toEqual([]);
  });

  it('sends to a name with only public addresses, or anywhere when allowed', async () => {
    expect(await send('https://hooks.example.com/x', ['93.184.216.34'])).toMatchObject({ ok: true });
    expect(await send('https://hooks.example.com/x', ['127.0.0.1'], true)).toMatchObject({ ok: true });
    expect(await send('http://127.0.0.1:9/hook', [], true)).toMatchObject({ ok: true });
    expect(calls).toHaveLength(3);
  });
});
