/**
 * The AI SDK, loaded when an agent loop first runs rather than when `baton` is imported: it is
 * ~0.4 s of module loading (the SDK, its gateway and OIDC packages) that a plain task never needs.
 * The loop awaits `loadAiSdk()` before its deadline starts, so no model turn waits on the import.
 */
export type AiSdk = typeof import('ai');

let loaded: Promise<AiSdk> | undefined;

export function loadAiSdk(): Promise<AiSdk> {
  loaded ??= import('ai');
  return loaded;
}
