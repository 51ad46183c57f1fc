export { TavilySearchProvider, createTavilyProvider, TAVILY_BASE_URL, type TavilyOptions } from './tavily-search-provider.js';
