/**
 * A chat UI that reconnects to a running agent with no extra server: the agent's AI SDK UI message
 * stream is written into the run's durable event log (one `task:event` per chunk, kind `ui`), and
 * `uiMessageStreamResponse` serves it in the AI SDK's UI message stream format (SSE, `data: {...}`)
 * with each event's id, so a client that reconnects with `Last-Event-ID` gets exactly what it has
 * not seen, then the rest live, then `[DONE]`. A resumed attempt replays its memoized model calls
 * and so the same chunks; each chunk carries its position, and a chunk already sent is skipped.
 */
import type { UIMessageChunk } from 'ai';
import type { Baton, TaskContext } from '../runtime/index.ts';

export const UI_EVENT_KIND = 'ui';

/** Writes a UI message stream into the run's events as it flows; resolves when it ends. */
export async function recordUiStream(
  ctx: TaskContext,
  stream: ReadableStream<UIMessageChunk> | AsyncIterable<UIMessageChunk>,
): Promise<number> {
  let index = 0;
  for await (const chunk of stream as AsyncIterable<UIMessageChunk>) {
    ctx.emit(UI_EVENT_KIND, { index, chunk: chunk as unknown as Record<string, unknown> });
    index++;
  }
  return index;
}

function sse(id: number | undefined, data: string): string {
  return `${id !== undefined ? `id: ${id}\n` : ''}data: ${data}\n\n`;
}

/**
 * The run's UI message stream as a `Response` (headers as the AI SDK's
 * `createUIMessageStreamResponse`), from after `Last-Event-ID` (header or `lastEventId` option).
 */
export function uiMessageStreamResponse(
  baton: Baton,
  runId: string,
  options: { request?: Request; lastEventId?: number; signal?: AbortSignal } = {},
): Response {
  const header = options.request?.headers.get('last-event-id');
  const after = options.lastEventId ?? (header && /^\d+$/.test(header) ? Number(header) : 0);
  const signal = options.signal ?? options.request?.signal;
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      // The highest chunk position sent (or, before `after`, already seen by the client).
      let sentUpTo = -1;
      try {
        for await (const e of baton.events(runId, signal ? { signal } : {})) {
          if (e.type !== 'task:event') continue;
          const d = e.data as { kind?: string; data?: { index?: number; chunk?: unknown } };
          if (d.kind !== UI_EVENT_KIND || typeof d.data?.index !== 'number') continue;
          if (d.data.index <= sentUpTo) continue;
          sentUpTo = d.data.index;
          if (e.id > after) controller.enqueue(encoder.encode(sse(e.id, JSON.stringify(d.data.chunk))));
        }
        controller.enqueue(encoder.encode(sse(undefined, '[DONE]')));
      } catch (err) {
        if (!signal?.aborted) controller.error(err);
        return;
      }
      controller.close();
    },
  });
  return new Response(body, {
    headers: {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-vercel-ai-ui-message-stream': 'v1',
      'x-accel-buffering': 'no',
    },
  });
}
