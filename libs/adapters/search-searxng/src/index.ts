export { SearxngSearchProvider, createSearxngProvider, type SearxngOptions } from './searxng-search-provider.js';
