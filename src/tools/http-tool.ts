import { BatonError, ValidationError } from '../core/index.ts';
import type { TaskContext } from '../runtime/index.ts';
import { splitSchedule } from '../schedule/index.ts';
import type { TimerHandle } from '../time/index.ts';
import type { ToolArgs } from './define-tool.ts';

/**
 * A handler that calls an external tool server: POST the arguments as JSON, return the JSON it
 * answers. `schedule` never reaches the server (protocol 004: "schedule 参数会被自动移除"); the
 * tool's run already removed it, and this handler removes it again for callers that use it alone.
 */

export interface HttpToolOptions {
  /** The tool server's endpoint (http or https). */
  url: string | URL;
  /** Extra request headers, e.g. an authorization. @default {} */
  headers?: Record<string, string>;
  /**
   * Gives up on the request after this long (on the task's clock) with TIMEOUT. The attempt's own
   * timeout applies in any case, through `ctx.signal`.
   * @default no limit of its own
   */
  timeoutMs?: number;
}

/** What the handler needs of the task context. */
export type HttpToolContext = Pick<TaskContext, 'signal' | 'clock'>;

/** How much of an error body is kept in the error's data. */
const BODY_EXCERPT = 500;

function checkOptions(options: HttpToolOptions): { url: URL; headers: Record<string, string> } {
  let url: URL;
  try {
    url = new URL(String(options?.url));
  } catch {
    throw new ValidationError('url', 'an absolute http(s) URL', options?.url, { code: 'INVALID_OPTION' });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ValidationError('url', 'an http: or https: URL', String(options.url), {
      code: 'INVALID_OPTION',
    });
  const { timeoutMs, headers = {} } = options;
  if (
    timeoutMs !== undefined &&
    !(typeof timeoutMs === 'number' && timeoutMs > 0 && Number.isFinite(timeoutMs))
  )
    throw new ValidationError('timeoutMs', 'a positive number of milliseconds', timeoutMs, {
      code: 'INVALID_OPTION',
    });
  if (
    typeof headers !== 'object' ||
    headers === null ||
    Object.values(headers).some((v) => typeof v !== 'string')
  )
    throw new ValidationError('headers', 'an object of string header values', headers, {
      code: 'INVALID_OPTION',
    });
  return { url, headers };
}

async function readJson(response: Response, where: string): Promise<unknown> {
  const text = await response.text();
  if (!response.ok)
    throw new BatonError(
      'TASK_FAILED',
      `tool server ${where} answered ${response.status} ${response.statusText}`,
      {
        data: { status: response.status, body: text.slice(0, BODY_EXCERPT) },
      },
    );
  if (text.trim() === '') return null;
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new BatonError(
      'TASK_FAILED',
      `tool server ${where} answered ${response.status} with a body that is not JSON`,
      {
        cause: err,
        data: { status: response.status, body: text.slice(0, BODY_EXCERPT) },
      },
    );
  }
}

/**
 * A tool handler that POSTs the arguments to an HTTP tool server and returns its JSON answer.
 * @example defineTool({ name: 'image_draw', inputSchema, handler: httpToolHandler({ url: 'http://127.0.0.1:8700/image_draw' }) })
 */
export function httpToolHandler<O = unknown>(
  options: HttpToolOptions,
): (args: ToolArgs, ctx: HttpToolContext) => Promise<O> {
  const { url, headers } = checkOptions(options);
  // Messages and data name the endpoint without its query, which may carry a key.
  const where = `${url.origin}${url.pathname}`;
  return async (args, ctx) => {
    const body = JSON.stringify(splitSchedule(args).args);
    const controller = new AbortController();
    const onAbort = () => controller.abort(ctx.signal.reason);
    if (ctx.signal.aborted) onAbort();
    else ctx.signal.addEventListener('abort', onAbort, { once: true });
    let timer: TimerHandle | undefined;
    if (options.timeoutMs !== undefined) {
      const ms = options.timeoutMs;
      timer = ctx.clock.setTimer(ms, () =>
        controller.abort(
          new BatonError('TIMEOUT', `tool server ${where} did not answer within ${ms} ms`, {
            data: { timeoutMs: ms, url: where },
          }),
        ),
      );
    }
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
        body,
        signal: controller.signal,
      });
      return (await readJson(response, where)) as O;
    } catch (err) {
      if (controller.signal.aborted) throw controller.signal.reason ?? err;
      if (err instanceof BatonError) throw err;
      throw new BatonError(
        'TASK_FAILED',
        `tool server ${where} could not be reached: ${(err as Error).message}`,
        {
          cause: err,
          data: { url: where },
        },
      );
    } finally {
      ctx.clock.clearTimer(timer);
      ctx.signal.removeEventListener('abort', onAbort);
    }
  };
}
