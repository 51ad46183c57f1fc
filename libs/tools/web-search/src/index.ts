export {
  createWebSearchTool,
  WEB_SEARCH_MAX_RESULTS,
  WEB_SEARCH_MAX_QUERY_LENGTH,
  WEB_SEARCH_TIMEOUT_MS,
  type WebSearchToolOptions,
} from './web-search.tool.js';
