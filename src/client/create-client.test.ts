import { afterEach, describe, expect, it } from 'vitest';
import { createHttpHandler, type HttpHandler } from '../http/index.ts';
import { defineTask } from '../runtime/index.ts';
import { type TestRuntime, testRuntime } from '../testing/index.ts';
import { createClient } from './create-client.ts';
import { BatonHttpError, errorFromResponse } from './http-error.ts';

const TOKEN = 'client-test-token-123456';
const open: Array<{ rt: TestRuntime; handler: HttpHandler }> = [];
afterEach(async () => {
  for (const { rt, handler } of open.splice(0)) {
    handler.close();
    await rt.dispose();
  }
});

/** A client talking to the handler in-process (no socket), recording the requests it sends. */
function inProcess(token?: string) {
  const rt = testRuntime();
  rt.baton.register(defineTask({ name: 'double', run: async (input: { n: number }) => input.n * 2 }));
  const h = createHttpHandler(rt.baton, { token: TOKEN });
  open.push({ rt, handler: h });
  const sent: Request[] = [];
  const client = createClient({
    baseUrl: 'http://baton.test/',
    ...(token !== undefined ? { token } : {}),
    clock: rt.clock,
    fetch: async (input, init) => {
      const request = new Request(input, init);
      sent.push(request.clone());
      return h(request);
    },
  });
  return { client, sent };
}

describe('createClient', () => {
  it('sends the bearer token and JSON, and returns typed answers', async () => {
    const { client, sent } = inProcess(TOKEN);
    const answer = await client.call('double', { n: 21 }, { id: 'job-42' });
    expect(answer).toMatchObject({ kind: 'result', body: { result: 42, metadata: { jobId: 'job-42' } } });
    expect(sent[0]?.headers.get('authorization')).toBe(`Bearer ${TOKEN}`);
    expect(sent[0]?.headers.get('content-type')).toBe('application/json');
    expect(await sent[0]?.json()).toEqual({ task: 'double', input: { n: 21 }, id: 'job-42', mode: 'sync' });
    expect(sent[0]?.url).toBe('http://baton.test/runs');
    expect((await client.get('job-42')).run.output).toBe(42);
  });

  it('throws BatonHttpError with the status, the server code and the details', async () => {
    const { client } = inProcess(TOKEN);
    const missing = await client.get('nope').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(BatonHttpError);
    expect(missing).toMatchObject({ status: 404, code: 'RUN_NOT_FOUND', errorCode: 'RUN_NOT_FOUND' });
    const unauthorized = await inProcess()
      .client.list()
      .catch((e: unknown) => e);
    // A code core does not know keeps its text in errorCode; `code` falls back to UNKNOWN.
    expect(unauthorized).toMatchObject({ status: 401, code: 'UNKNOWN', errorCode: 'UNAUTHORIZED' });
  });

  it('refuses a base URL that is not http(s)', () => {
    expect(() => createClient({ baseUrl: 'ftp://x' })).toThrow(/^baseUrl must be an http\(s\) URL/);
  });
});

describe('errorFromResponse', () => {
  it('reads a proxy page that is not the API error shape', async () => {
    const err = await errorFromResponse(
      new Response('<h1>Bad gateway</h1>', { status: 502, statusText: 'Bad Gateway' }),
    );
    expect(err).toMatchObject({ status: 502, errorCode: 'HTTP_502', code: 'UNKNOWN' });
    expect(err.message).toBe('HTTP 502 Bad Gateway: <h1>Bad gateway</h1>');
  });

  it('refuses unknown option keys by name before sending anything (issue 11 item 6)', async () => {
    expect(() => createClient({ baseUrl: 'http://baton.test', tokn: TOKEN } as never)).toThrow(
      /^client options\.tokn is not an option \(did you mean "token"\?\)/,
    );
    const { client, sent } = inProcess(TOKEN);
    await expect(client.start('double', { n: 1 }, { budgt: '5s' } as never)).rejects.toThrow(
      /^start options\.budgt is not an option \(did you mean "budget"\?\)/,
    );
    await expect(client.call('double', { n: 1 }, { timeout: 5 } as never)).rejects.toThrow(
      /^call options\.timeout is not an option/,
    );
    await expect(client.run('double', { n: 1 }, { maxResume: 3 } as never)).rejects.toThrow(
      /maxResume is not an option \(did you mean "maxResumes"\?\)/,
    );
    await expect(client.run('double', { n: 1 }, { backoff: { initial: 5 } } as never)).rejects.toThrow(
      /^run options\.backoff\.initial is not an option/,
    );
    await expect(client.resume('x', { timeoutMS: 5 } as never)).rejects.toThrow(
      /^resume options\.timeoutMS is not an option \(did you mean "timeoutMs"\?\)/,
    );
    expect(() => client.events('x', { folow: true } as never)).toThrow(
      /^events options\.folow is not an option \(did you mean "follow"\?\)/,
    );
    expect(sent).toEqual([]);
    // The options that exist still work together.
    const done = await client.run(
      'double',
      { n: 2 },
      { id: 'ok-1', maxResumes: 1, backoff: { initialMs: 1 } },
    );
    expect(done).toMatchObject({ status: 'succeeded', result: 4 });
  });
});
