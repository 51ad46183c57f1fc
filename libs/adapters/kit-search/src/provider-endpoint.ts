import { SearchConfigError } from '@toolgate/contracts';

/** The one setting every provider's base URL comes from. */
export const BASE_URL_SETTING = 'TOOLGATE_WEB_SEARCH_BASE_URL';

/** Where a provider sends its searches, derived from an operator-configured base URL. */
export interface ProviderEndpoint {
  /** The host as the egress allowlist names it: lower case, no IPv6 brackets, no trailing dot. */
  readonly host: string;
  /** The base URL's origin and path (without trailing slashes) followed by the endpoint path. */
  readonly url: string;
}

/**
 * Validates a provider's base URL (a default or `TOOLGATE_WEB_SEARCH_BASE_URL`) and derives the
 * host the gateway's egress gate checks and the endpoint the provider calls. A base URL that is
 * not a plain http(s) URL is refused with a `SearchConfigError` naming `TOOLGATE_WEB_SEARCH_BASE_URL`
 * as present but unusable (a startup error, never a tool failure), and the message never repeats
 * the URL, which could carry credentials.
 *
 * @param baseUrl e.g. `https://search.example.org/searxng/`
 * @param provider the service's name as operators know it, e.g. `SearXNG`
 * @param path the endpoint below the base, e.g. `/search`
 */
export function resolveEndpoint(baseUrl: string, provider: string, path: string): ProviderEndpoint {
  let base: URL;
  try {
    base = new URL(baseUrl);
  } catch {
    throw new SearchConfigError(`the ${provider} base URL is not a valid URL`, BASE_URL_SETTING, false);
  }
  if ((base.protocol !== 'http:' && base.protocol !== 'https:') || base.username || base.password || base.search || base.hash) {
    throw new SearchConfigError(`the ${provider} base URL must be a plain http(s) URL without credentials, query or fragment`, BASE_URL_SETTING, false);
  }
  return {
    host: base.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, ''),
    url: `${base.origin}${base.pathname.replace(/\/+$/, '')}${path}`,
  };
}
