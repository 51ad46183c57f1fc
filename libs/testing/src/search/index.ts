export {
  testSearchProvider,
  SearchErrorReasons,
  SearchResultLimits,
  type SearchProviderSuiteOptions,
  type RecordedFailure,
  type ServedSearchResult,
} from './search-provider.contract.js';
export { startReplayServer, type ReplayServer, type ReplayedRequest, type RecordedResponse } from './replay-server.js';
export { LoopbackHttpClient } from './loopback-http-client.js';
