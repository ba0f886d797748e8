import type { ModelMessage, UserModelMessage } from 'ai';
import { ValidationError } from '../core/index.ts';
import { groupExchanges, toolPartsOf } from './conversation-exchanges.ts';

/*
 * Checkpoint compression (protocol 003): when a history has more than `threshold` exchanges, keep
 * the first `keepFirst` (setup), ONE marker message saying what was left out, and the last
 * `keepLast` (what the model needs to carry on): 80 → 5 + 1 + 20 = 26. Exchanges never split a
 * tool call from its result (see conversation-exchanges.ts), so the result is always a
 * conversation providers accept.
 *
 * The marker is a `user` message: a `system` message in mid-conversation is rejected by some
 * providers. Its facts are also kept machine-readable in `providerOptions.baton`, a key no
 * provider reads, so a later compression that drops an earlier marker adds its numbers up instead
 * of losing them, and turn numbering stays right.
 */

export interface CompressionOptions {
  /** Compress only when the history has more exchanges than this. @default 50 */
  threshold?: number;
  /** Exchanges kept from the start. @default 5 */
  keepFirst?: number;
  /** Exchanges kept from the end. @default 20 */
  keepLast?: number;
}

export interface CompressionResult {
  messages: ModelMessage[];
  compressed: boolean;
  originalExchanges: number;
  /** Exchanges after compression, the marker counted as one (80 → 26). */
  resultExchanges: number;
  /** Exchanges of the input that were dropped (80 → 55). */
  omittedExchanges: number;
  omittedMessages: number;
  /** resultExchanges / originalExchanges; 1 when nothing was compressed. */
  exchangeRatio: number;
  /** Serialized size after / before; 1 when nothing was compressed. */
  sizeRatio: number;
}

/** What a marker says, cumulative over earlier markers it replaced. */
export interface CompressionMarkerInfo {
  kind: 'history-compression';
  omittedExchanges: number;
  omittedMessages: number;
  /** Model turns (assistant messages) left out. */
  omittedTurns: number;
  firstOmittedTurn: number | null;
  lastOmittedTurn: number | null;
  /** Tool name → number of calls in the omitted part. */
  toolCalls: Record<string, number>;
}

const MARKER_KEY = 'baton';
const MAX_TOOL_NAMES_IN_TEXT = 12;

export function resolveCompressionOptions(
  options: CompressionOptions = {},
  path = 'options',
): Required<CompressionOptions> {
  if (typeof options !== 'object' || options === null)
    throw new ValidationError(path, 'an object', options, { code: 'INVALID_OPTION' });
  const resolved = {
    threshold: options.threshold ?? 50,
    keepFirst: options.keepFirst ?? 5,
    keepLast: options.keepLast ?? 20,
  };
  for (const [key, value] of Object.entries(resolved)) {
    if (!(Number.isSafeInteger(value) && value >= 0))
      throw new ValidationError(`${path}.${key}`, 'a non-negative integer', value, {
        code: 'INVALID_OPTION',
      });
  }
  // Otherwise a history just over the threshold would have nothing to omit and grow by a marker.
  if (resolved.threshold < resolved.keepFirst + resolved.keepLast)
    throw new ValidationError(
      `${path}.threshold`,
      `at least keepFirst + keepLast (${resolved.keepFirst + resolved.keepLast})`,
      resolved.threshold,
      { code: 'INVALID_OPTION' },
    );
  return resolved;
}

export function compressConversationHistory(
  history: readonly ModelMessage[],
  options?: CompressionOptions,
): CompressionResult {
  if (!Array.isArray(history)) throw new ValidationError('history', 'an array of messages', history);
  const { threshold, keepFirst, keepLast } = resolveCompressionOptions(options);
  const exchanges = groupExchanges(history);
  if (exchanges.length <= threshold) {
    const n = exchanges.length;
    return {
      messages: [...history],
      compressed: false,
      originalExchanges: n,
      resultExchanges: n,
      omittedExchanges: 0,
      omittedMessages: 0,
      exchangeRatio: 1,
      sizeRatio: 1,
    };
  }
  const head = exchanges.slice(0, keepFirst).flat();
  const omitted = exchanges.slice(keepFirst, exchanges.length - keepLast);
  const tail = exchanges.slice(exchanges.length - keepLast).flat();
  const marker = createMarker(omitted.flat(), omitted.length, countModelTurns(head));
  const messages = [...head, marker, ...tail];
  const resultExchanges = keepFirst + 1 + keepLast;
  return {
    messages,
    compressed: true,
    originalExchanges: exchanges.length,
    resultExchanges,
    omittedExchanges: omitted.length,
    omittedMessages: omitted.reduce((sum, e) => sum + e.length, 0),
    exchangeRatio: resultExchanges / exchanges.length,
    sizeRatio: JSON.stringify(messages).length / JSON.stringify(history).length,
  };
}

/** The marker facts of a message, or undefined when it is not a compression marker. */
export function readCompressionMarker(message: unknown): CompressionMarkerInfo | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  const options = (message as { providerOptions?: Record<string, unknown> }).providerOptions;
  const info = options?.[MARKER_KEY] as Partial<CompressionMarkerInfo> | undefined;
  if (info?.kind !== 'history-compression') return undefined;
  return info as CompressionMarkerInfo;
}

/** Model turns in a history: assistant messages, plus the turns that markers stand for. */
export function countModelTurns(history: readonly unknown[]): number {
  let turns = 0;
  for (const message of history) {
    const marker = readCompressionMarker(message);
    if (marker) turns += marker.omittedTurns;
    else if ((message as { role?: unknown } | null)?.role === 'assistant') turns += 1;
  }
  return turns;
}

function createMarker(omitted: ModelMessage[], exchanges: number, turnsBefore: number): UserModelMessage {
  const info: CompressionMarkerInfo = {
    kind: 'history-compression',
    omittedExchanges: 0,
    omittedMessages: 0,
    omittedTurns: 0,
    firstOmittedTurn: null,
    lastOmittedTurn: null,
    toolCalls: {},
  };
  // Each earlier marker stands for many exchanges; it is itself one of `exchanges`.
  let earlierMarkers = 0;
  for (const message of omitted) {
    const earlier = readCompressionMarker(message);
    if (earlier) {
      earlierMarkers += 1;
      info.omittedExchanges += earlier.omittedExchanges;
      info.omittedMessages += earlier.omittedMessages;
      info.omittedTurns += earlier.omittedTurns;
      for (const [name, count] of Object.entries(earlier.toolCalls))
        info.toolCalls[name] = (info.toolCalls[name] ?? 0) + count;
      continue;
    }
    info.omittedMessages += 1;
    if (message.role === 'assistant') info.omittedTurns += 1;
    for (const part of toolPartsOf(message)) {
      if (part.kind === 'call') info.toolCalls[part.toolName] = (info.toolCalls[part.toolName] ?? 0) + 1;
    }
  }
  info.omittedExchanges += exchanges - earlierMarkers;
  if (info.omittedTurns > 0) {
    info.firstOmittedTurn = turnsBefore + 1;
    info.lastOmittedTurn = turnsBefore + info.omittedTurns;
  }
  return {
    role: 'user',
    content: [{ type: 'text', text: markerText(info) }],
    providerOptions: { [MARKER_KEY]: { ...info } },
  };
}

function markerText(info: CompressionMarkerInfo): string {
  const turns =
    info.omittedTurns === 0
      ? 'no model turns'
      : `model turns ${info.firstOmittedTurn}–${info.lastOmittedTurn}`;
  const names = Object.entries(info.toolCalls).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const shown = names.slice(0, MAX_TOOL_NAMES_IN_TEXT).map(([name, count]) => `${name} ×${count}`);
  if (names.length > shown.length) shown.push(`${names.length - shown.length} more`);
  return (
    `[Earlier conversation compressed: ${info.omittedExchanges} exchanges (${info.omittedMessages} messages, ` +
    `${turns}) were left out to keep the saved history small. Tools called in that part: ` +
    `${shown.length > 0 ? shown.join(', ') : 'none'}. The messages before and after this note are unchanged.]`
  );
}
