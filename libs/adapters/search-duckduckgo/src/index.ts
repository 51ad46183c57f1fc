export {
  DuckDuckGoSearchProvider,
  createDuckDuckGoProvider,
  DUCKDUCKGO_BASE_URL,
  type DuckDuckGoOptions,
} from './duckduckgo-search-provider.js';
export { parseDuckDuckGoHtml, decodeResultLink, type ParsedPage } from './parse-results.js';
