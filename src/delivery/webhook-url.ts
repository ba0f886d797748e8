import { ValidationError } from '../core/index.ts';
import { isPrivateHost } from './private-address.ts';

/**
 * A webhook URL must be absolute http: or https:. https is not required (use it outside a private
 * network, so the payload and its signature are not readable on the way). A host on loopback, a
 * link-local or a private address is refused unless `allowPrivateNetwork` (the operator's say-so);
 * names are checked again, resolved, when a delivery is sent. Credentials in the URL are refused:
 * they would land in logs and in the stored target (use `headers` instead).
 */
export function checkWebhookUrl(url: unknown, field: string, allowPrivateNetwork = false): URL {
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
  if (!allowPrivateNetwork && isPrivateHost(parsed.hostname))
    throw new ValidationError(
      field,
      'a URL on a public address (loopback, link-local and private addresses need allowPrivateNetwork: true)',
      url,
      { code: 'INVALID_OPTION' },
    );
  return parsed;
}
