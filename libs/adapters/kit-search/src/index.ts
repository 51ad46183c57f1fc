/**
 * The search kit: what the web-search providers (DuckDuckGo, SearXNG, Tavily) share, so that
 * every provider hands agents the same plain-text results, validates its base URL the same way
 * and reports the same failure with the same `ToolError` reason (ADR 0040). A provider adds only
 * what is its own: the request it sends, how it finds the results in the answer, and the
 * messages for the statuses only it knows.
 *
 * - `plain-text`: HTML fragment → one line of text, entities decoded once, length capped.
 * - `search-result`: one result from the fields a service sent; http(s) URLs only.
 * - `provider-endpoint`: base URL validation (a `SearchConfigError` when unusable), egress host and endpoint.
 * - `provider-answer`: status → `ToolError` mapping and JSON answer parsing.
 *
 * Depends only on `@toolgate/contracts` and cheerio; only search adapters import it.
 */
export { clipText, plainText } from './plain-text.js';
export { httpUrl, MAX_SNIPPET_LENGTH, MAX_TITLE_LENGTH, toSearchResult, type ServedResult } from './search-result.js';
export { BASE_URL_SETTING, resolveEndpoint, type ProviderEndpoint } from './provider-endpoint.js';
export { badResponse, checkStatus, noResults, readJsonAnswer, type JsonAnswer } from './provider-answer.js';
