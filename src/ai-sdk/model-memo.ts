/**
 * An AI SDK language-model middleware that makes every model call a memoized Baton step: the key
 * is the call's content (a hash of the prompt, tools and settings, plus how many identical calls
 * came before it in this attempt), so a retried or resumed run gets the completions it already paid
 * for from the record, and only a changed or new call reaches the model. Streams are recorded part
 * by part while they reach the caller, and replayed as a stream.
 */
import { createHash } from 'node:crypto';
import type { LanguageModelMiddleware } from 'ai';
import type { TaskContext } from '../runtime/index.ts';

type GenerateResult = Awaited<ReturnType<NonNullable<LanguageModelMiddleware['wrapGenerate']>>>;
type StreamResult = Awaited<ReturnType<NonNullable<LanguageModelMiddleware['wrapStream']>>>;
type StreamPart = StreamResult['stream'] extends ReadableStream<infer P> ? P : never;
type CallParams = Parameters<NonNullable<LanguageModelMiddleware['wrapGenerate']>>[0]['params'];

/** JSON with object keys sorted, so equal calls hash equally whatever order their keys were built in. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => {
    if (v instanceof Uint8Array) return { $bytes: Buffer.from(v).toString('base64') };
    if (v && typeof v === 'object' && !Array.isArray(v))
      return Object.fromEntries(
        Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)),
      );
    return v;
  });
}

/** What identifies a call: everything that shapes the completion, nothing per-request (signal, headers). */
export function callKey(modelId: string, provider: string, params: CallParams): string {
  const {
    abortSignal: _s,
    headers: _h,
    includeRawChunks: _r,
    ...content
  } = params as CallParams & {
    includeRawChunks?: boolean;
  };
  return createHash('sha256')
    .update(canonicalJson({ provider, modelId, ...content }))
    .digest('hex')
    .slice(0, 32);
}

interface StoredGenerate {
  content: GenerateResult['content'];
  finishReason: GenerateResult['finishReason'];
  usage: GenerateResult['usage'];
  providerMetadata?: GenerateResult['providerMetadata'];
  warnings: GenerateResult['warnings'];
  response?: { id?: string; modelId?: string; timestamp?: string };
}

function store(r: GenerateResult): StoredGenerate {
  return {
    content: r.content,
    finishReason: r.finishReason,
    usage: r.usage,
    ...(r.providerMetadata ? { providerMetadata: r.providerMetadata } : {}),
    warnings: r.warnings,
    ...(r.response
      ? {
          response: {
            ...(r.response.id !== undefined ? { id: r.response.id } : {}),
            ...(r.response.modelId !== undefined ? { modelId: r.response.modelId } : {}),
            ...(r.response.timestamp ? { timestamp: r.response.timestamp.toISOString() } : {}),
          },
        }
      : {}),
  };
}

function revive(s: StoredGenerate): GenerateResult {
  return {
    content: s.content,
    finishReason: s.finishReason,
    usage: s.usage,
    ...(s.providerMetadata ? { providerMetadata: s.providerMetadata } : {}),
    warnings: s.warnings,
    ...(s.response
      ? {
          response: {
            ...(s.response.id !== undefined ? { id: s.response.id } : {}),
            ...(s.response.modelId !== undefined ? { modelId: s.response.modelId } : {}),
            ...(s.response.timestamp ? { timestamp: new Date(s.response.timestamp) } : {}),
          },
        }
      : {}),
  };
}

function revivePart(p: StreamPart): StreamPart {
  if (p.type === 'response-metadata' && typeof p.timestamp === 'string')
    return { ...p, timestamp: new Date(p.timestamp) } as StreamPart;
  return p;
}

export interface MemoOptions {
  /** Prefix of the step keys. @default 'ai:model' */
  prefix?: string;
}

/**
 * The middleware, for one attempt of a task (`wrapLanguageModel({ model, middleware:
 * durableModelMiddleware(ctx) })`, or `durableModel(model, ctx)`).
 */
export function durableModelMiddleware(ctx: TaskContext, options: MemoOptions = {}): LanguageModelMiddleware {
  const prefix = options.prefix ?? 'ai:model';
  const seen = new Map<string, number>();
  const keyOf = (kind: 'generate' | 'stream', modelId: string, provider: string, params: CallParams) => {
    const hash = callKey(modelId, provider, params);
    const n = seen.get(`${kind}:${hash}`) ?? 0;
    seen.set(`${kind}:${hash}`, n + 1);
    return `${prefix}:${kind}:${hash}:${n}`;
  };
  return {
    specificationVersion: 'v3',
    wrapGenerate: async ({ doGenerate, params, model }) => {
      const key = keyOf('generate', model.modelId, model.provider, params);
      return revive(await ctx.step(key, async () => store(await doGenerate())));
    },
    wrapStream: async ({ doStream, params, model }) => {
      const key = keyOf('stream', model.modelId, model.provider, params);
      let toCaller!: (r: StreamResult) => void;
      const live = new Promise<StreamResult>((resolve) => {
        toCaller = resolve;
      });
      const recorded = ctx.step(key, async () => {
        const result = await doStream();
        const [forCaller, forRecord] = result.stream.tee();
        toCaller({ ...result, stream: forCaller });
        const parts: StreamPart[] = [];
        const reader = forRecord.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          // A stream that failed is not a completion to keep: the next attempt asks again.
          if (value.type === 'error')
            throw new Error(`model stream failed: ${String((value as { error: unknown }).error)}`);
          parts.push(value);
        }
        return { parts };
      });
      const first = await Promise.race([
        live.then((r) => ({ live: r })),
        recorded.then((r) => ({ replay: r.parts })),
      ]);
      if ('live' in first) {
        recorded.catch(() => {}); // the caller sees the failure in its own copy of the stream
        return first.live;
      }
      const parts = first.replay.map(revivePart);
      return {
        stream: new ReadableStream<StreamPart>({
          start(controller) {
            for (const p of parts) controller.enqueue(p);
            controller.close();
          },
        }),
      };
    },
  };
}
