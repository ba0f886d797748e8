import { afterEach, describe, expect, it } from 'vitest';
import { type TestRuntime, testRuntime } from '../testing/index.ts';
import { isLoopback, serveHttp } from './serve-http.ts';

let rt: TestRuntime | undefined;
afterEach(async () => {
  await rt?.dispose();
});

describe('isLoopback', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['localhost', true],
    ['::1', true],
    ['[::1]', true],
    ['::ffff:127.0.0.1', true],
    ['0.0.0.0', false],
    ['::', false],
    ['192.168.1.10', false],
    ['example.com', false],
  ])('%s → %s', (host, expected) => {
    expect(isLoopback(host)).toBe(expected);
  });
});

describe('serveHttp', () => {
  it('refuses to bind a non-loopback address without a token', async () => {
    rt = testRuntime();
    await expect(serveHttp(rt.baton, { host: '0.0.0.0' })).rejects.toThrow(
      /^token is required when serving on 0\.0\.0\.0, which is not a loopback address/,
    );
    await expect(serveHttp(rt.baton, { port: 70_000 })).rejects.toThrow(
      /^port must be an integer from 0 to 65535/,
    );
  });

  it('serves on loopback without a token and stops on close', async () => {
    rt = testRuntime();
    const server = await serveHttp(rt.baton);
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    await server.close();
    await expect(fetch(`${server.url}/health`)).rejects.toThrow();
  });

  it('refuses an unknown option by name, with the listening options among the known ones', async () => {
    rt = testRuntime();
    await expect(serveHttp(rt.baton, { prot: 8080 } as never)).rejects.toThrow(
      /^serveHttp options\.prot is not an option \(did you mean "port"\?\)/,
    );
    await expect(serveHttp(rt.baton, { dashbord: true } as never)).rejects.toThrow(
      /dashbord is not an option \(did you mean "dashboard"\?\)/,
    );
  });
});
