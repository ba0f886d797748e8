import { createRequire } from 'node:module';

/**
 * The AI SDK, loaded at the first agent turn rather than when `baton` is imported: it is
 * module loading (the SDK, its gateway and OIDC packages: ~55 ms of CPU beyond zod, measured) that a
 * plain task never needs.
 *
 * Loaded with `require`, synchronously: an `await import()` inside a running invocation yields to
 * the event loop for as long as the files take to read, which moves a test's manual clock by an
 * amount that depends on the disk. The SDK ships a CommonJS build, and it marks its schemas and
 * errors with `Symbol.for` keys, so values from a user's ESM copy (`jsonSchema(...)`, models,
 * `APICallError`) work with this one.
 */
export type AiSdk = typeof import('ai');

const require = createRequire(import.meta.url);
let sdk: AiSdk | undefined;

export function aiSdk(): AiSdk {
  sdk ??= require('ai') as AiSdk;
  return sdk;
}
