import { ValidationError } from '../core/index.ts';

/**
 * A webhook URL must be absolute http: or https:. https is not required, so a receiver on
 * localhost or inside a private network works; anywhere else, use https so the payload and its
 * signature are not readable on the way. Credentials in the URL are refused: they would land in
 * logs and in the stored target (use `headers` instead).
 */
export function checkWebhookUrl(url: unknown, field: string): URL {
  const parsed = typeof url === 'string' && URL.canParse(url) ? new URL(url) : undefined;
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:'))
    throw new ValidationError(field, 'an absolute http: or https: URL', url, { code: 'INVALID_OPTION' });
  if (parsed.username || parsed.password)
    throw new ValidationError(
      field,
      'a URL without user:password (put credentials in headers)',
      '(redacted)',
      {
        code: 'INVALID_OPTION',
      },
    );
  return parsed;
}
