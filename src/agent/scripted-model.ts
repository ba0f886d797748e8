import type { LanguageModel } from 'ai';
import { ValidationError } from '../core/index.ts';
import type { Clock } from '../time/index.ts';
import { countModelTurns } from './compress-history.ts';

/*
 * A deterministic local language model: a real LanguageModelV3 that plays a scripted multi-turn,
 * tool-calling conversation. For demos without an API key and for tests. Which scripted turn it
 * plays is read from the prompt (the number of model turns already in it, compression markers
 * included), not from a call counter, so a fresh process resuming from a checkpoint plays the
 * right turn. Delays go through the injected Clock, so with a ManualClock a test moves time
 * instead of sleeping.
 */

type LanguageModelV3 = Extract<LanguageModel, { specificationVersion: 'v3' }>;
type CallOptions = Parameters<LanguageModelV3['doGenerate']>[0];
type GenerateResult = Awaited<ReturnType<LanguageModelV3['doGenerate']>>;
type StreamResult = Awaited<ReturnType<LanguageModelV3['doStream']>>;
type StreamPart = StreamResult['stream'] extends ReadableStream<infer P> ? P : never;
type FinishReason = GenerateResult['finishReason']['unified'];

export interface ScriptedTurn {
  /** The assistant's text (the answer, or thoughts before tool calls). */
  text?: string;
  toolCalls?: ReadonlyArray<{ toolName: string; input?: unknown; toolCallId?: string }>;
  /** How long the call takes on the clock; aborted by the call's signal. @default 0 */
  delayMs?: number;
  /** Wait out `delayMs` ignoring the abort signal, like a provider that does not honour it. @default false */
  ignoreAbort?: boolean;
  /** Fail the call with this error (after the delay). */
  error?: Error | string;
  /** @default 'tool-calls' with tool calls, else 'stop' */
  finishReason?: FinishReason;
}

export interface ScriptContext {
  /** The turn being played, 1-based: model turns already in the prompt + 1. */
  turn: number;
  /** Calls made to this model instance so far, 0-based. */
  callIndex: number;
  prompt: CallOptions['prompt'];
}

export type Script = readonly ScriptedTurn[] | ((context: ScriptContext) => ScriptedTurn);

export interface ScriptedModelOptions {
  /** Needed when any turn has a delay. */
  clock?: Clock;
  /** @default 'scripted' */
  modelId?: string;
  /** @default 'baton' */
  provider?: string;
  /** Past the end of a list script: fail the call, or play the last turn again. @default 'throw' */
  afterEnd?: 'throw' | 'repeat-last';
}

export interface ScriptedModel extends LanguageModelV3 {
  /** Every call so far, for assertions. */
  readonly calls: readonly ScriptContext[];
}

export function createScriptedModel(script: Script, options: ScriptedModelOptions = {}): ScriptedModel {
  if (Array.isArray(script)) checkScript(script, options);
  else if (typeof script !== 'function')
    throw new ValidationError('script', 'an array of scripted turns or a function', script);
  const calls: ScriptContext[] = [];

  async function play(call: CallOptions): Promise<{ turn: ScriptedTurn; context: ScriptContext }> {
    const context: ScriptContext = {
      turn: countModelTurns(call.prompt) + 1,
      callIndex: calls.length,
      prompt: call.prompt,
    };
    calls.push(context);
    const turn = pick(script, context, options.afterEnd ?? 'throw');
    if (turn.delayMs && turn.delayMs > 0) {
      if (!options.clock)
        throw new ValidationError('options.clock', 'a Clock when a scripted turn has delayMs');
      await options.clock.sleep(turn.delayMs, turn.ignoreAbort ? undefined : call.abortSignal);
    }
    if (turn.error !== undefined) throw typeof turn.error === 'string' ? new Error(turn.error) : turn.error;
    return { turn, context };
  }

  return {
    specificationVersion: 'v3',
    provider: options.provider ?? 'baton',
    modelId: options.modelId ?? 'scripted',
    supportedUrls: {},
    calls,
    async doGenerate(call) {
      const { turn, context } = await play(call);
      return {
        content: [
          ...(turn.text ? [{ type: 'text' as const, text: turn.text }] : []),
          ...toolCallsOf(turn, context.turn),
        ],
        finishReason: { unified: finishOf(turn), raw: undefined },
        usage: USAGE,
        warnings: [],
      };
    },
    async doStream(call) {
      const { turn, context } = await play(call);
      const parts: StreamPart[] = [{ type: 'stream-start', warnings: [] }];
      if (turn.text) {
        const id = `text-${context.turn}`;
        parts.push(
          { type: 'text-start', id },
          { type: 'text-delta', id, delta: turn.text },
          { type: 'text-end', id },
        );
      }
      parts.push(...toolCallsOf(turn, context.turn));
      parts.push({ type: 'finish', finishReason: { unified: finishOf(turn), raw: undefined }, usage: USAGE });
      return {
        stream: new ReadableStream<StreamPart>({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      };
    },
  };
}

const USAGE: GenerateResult['usage'] = {
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 0, text: 0, reasoning: 0 },
};

function pick(script: Script, context: ScriptContext, afterEnd: 'throw' | 'repeat-last'): ScriptedTurn {
  if (typeof script === 'function') return script(context);
  const turn =
    script[context.turn - 1] ?? (afterEnd === 'repeat-last' ? script[script.length - 1] : undefined);
  if (!turn)
    throw new Error(`scripted model has ${script.length} turns; the prompt asks for turn ${context.turn}`);
  return turn;
}

function toolCallsOf(turn: ScriptedTurn, turnNumber: number) {
  return (turn.toolCalls ?? []).map((call, i) => ({
    type: 'tool-call' as const,
    // Deterministic and unique in the conversation: one turn plays once in a committed history.
    toolCallId: call.toolCallId ?? `call-${turnNumber}-${i + 1}`,
    toolName: call.toolName,
    input: JSON.stringify(call.input ?? {}),
  }));
}

function finishOf(turn: ScriptedTurn): FinishReason {
  return turn.finishReason ?? ((turn.toolCalls?.length ?? 0) > 0 ? 'tool-calls' : 'stop');
}

function checkScript(script: readonly ScriptedTurn[], options: ScriptedModelOptions): void {
  if (script.length === 0) throw new ValidationError('script', 'a non-empty array of scripted turns', script);
  script.forEach((turn, i) => {
    if (typeof turn !== 'object' || turn === null)
      throw new ValidationError(`script[${i}]`, 'an object', turn);
    if (turn.delayMs !== undefined && !(Number.isFinite(turn.delayMs) && turn.delayMs >= 0))
      throw new ValidationError(`script[${i}].delayMs`, 'a non-negative number of ms', turn.delayMs);
    if ((turn.delayMs ?? 0) > 0 && !options.clock)
      throw new ValidationError('options.clock', `a Clock, because script[${i}] has a delay`, options.clock);
    (turn.toolCalls ?? []).forEach((call, j) => {
      if (typeof call?.toolName !== 'string' || call.toolName === '')
        throw new ValidationError(`script[${i}].toolCalls[${j}].toolName`, 'a tool name', call?.toolName);
    });
  });
}
