/**
 * Webhook delivery (protocol 004 scheduled delivery): one signed JSON POST per try
 * (`sendWebhook`), the backoff between tries (`webhookRetryDelay`), the validated target
 * configuration (`parseWebhookTarget`), and the signature scheme receivers check
 * (`signBody` / `verifySignature`). The engine owns the durable retry loop and the deliveries table;
 * this module does no storage and keeps no state.
 */

export { isPrivateAddress, isPrivateHost, type ResolveHost } from './private-address.ts';
export {
  DEFAULT_WEBHOOK_RETRY,
  resolveWebhookRetryOptions,
  type WebhookRetryOptions,
  webhookRetryDelay,
} from './retry-schedule.ts';
export {
  DEFAULT_SIGNATURE_TOLERANCE_MS,
  SIGNATURE_HEADER,
  type SignatureCheck,
  type SignatureFailure,
  SignatureFailures,
  type SignatureSecret,
  type SignedBody,
  signBody,
  type VerifySignatureInput,
  verifySignature,
} from './signature.ts';
export {
  parseWebhookTarget,
  type WebhookTarget,
  type WebhookTargetInput,
  webhookTargetSchema,
} from './webhook-config.ts';
export { isReservedHeader, parseRetryAfter, WEBHOOK_HEADERS, WEBHOOK_USER_AGENT } from './webhook-headers.ts';
export {
  DEFAULT_WEBHOOK_TIMEOUT_MS,
  type SendWebhookInput,
  sendWebhook,
  type WebhookFailureReason,
  WebhookFailureReasons,
  type WebhookOutcome,
} from './webhook-sender.ts';
export { checkWebhookUrl } from './webhook-url.ts';
