import { createDuckDuckGoProvider } from '@toolgate/adapter-search-duckduckgo';
import { createSearxngProvider } from '@toolgate/adapter-search-searxng';
import { createTavilyProvider } from '@toolgate/adapter-search-tavily';
import { SearchConfigError, SearchProviderToken, type SearchProvider } from '@toolgate/contracts';
import type { SearchProviderName, ServerConfig } from '../config.js';
import type { Log } from '../logger.js';
import { StartupError } from '../startup-error.js';
import { ConfigToken, LogToken } from '../tokens.js';
import type { Binder } from './binder.js';

type SearchSettings = ServerConfig['webSearch'];

/**
 * Each search provider (`TOOLGATE_WEB_SEARCH_PROVIDER`) and how it is made from the settings. A
 * new provider is one more row and one more `SearchProviderName`. A provider throws
 * `SearchConfigError` for a setting it lacks or cannot use.
 */
const SEARCH_PROVIDERS = {
  duckduckgo: (s) => createDuckDuckGoProvider(s.baseUrl ? { baseUrl: s.baseUrl } : {}),
  searxng: (s) => createSearxngProvider(s.baseUrl ? { baseUrl: s.baseUrl } : {}),
  tavily: (s) => createTavilyProvider({ ...(s.apiKey ? { apiKey: s.apiKey } : {}), ...(s.baseUrl ? { baseUrl: s.baseUrl } : {}) }),
} satisfies Record<SearchProviderName, (settings: SearchSettings) => SearchProvider>;

/** The configured search provider; one missing its setting falls back to DuckDuckGo (logged). */
export function selectSearchProvider(settings: SearchSettings, log: Log): SearchProvider {
  try {
    return SEARCH_PROVIDERS[settings.provider](settings);
  } catch (error) {
    // Only a missing setting falls back; a setting that is present but unusable is an error.
    if (!(error instanceof SearchConfigError)) throw new StartupError(`TOOLGATE_WEB_SEARCH_PROVIDER=${settings.provider}: ${(error as Error).message}`);
    // The setting at fault, as the operator may not have set the provider at all (DuckDuckGo by default).
    if (!error.missing) throw new StartupError(`${error.setting}: ${error.message}`);
    log('warn', `web_search: ${error.message}; falling back to duckduckgo`);
  }
  // The base URL was meant for the provider that was chosen: the fallback keeps DuckDuckGo's own.
  return SEARCH_PROVIDERS.duckduckgo({ provider: 'duckduckgo', maxResults: settings.maxResults });
}

/** Port `SearchProvider`: made at start; it holds nothing to close (requests go through the guarded client). */
export function bindSearch(binder: Binder): void {
  binder.resolved(SearchProviderToken, { config: ConfigToken, log: LogToken }, ({ config, log }) => selectSearchProvider(config.webSearch, log));
}
