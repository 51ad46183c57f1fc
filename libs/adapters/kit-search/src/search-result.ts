import type { SearchResult } from '@toolgate/contracts';
import { plainText } from './plain-text.js';

/** The longest title a provider returns, in UTF-16 code units (docs/tools.md promises it). */
export const MAX_TITLE_LENGTH = 300;
/** The longest snippet a provider returns, in UTF-16 code units (docs/tools.md promises it). */
export const MAX_SNIPPET_LENGTH = 600;

/** The fields of one result as the service sent them: anything, since the answer is untrusted. */
export interface ServedResult {
  readonly url?: unknown;
  /** An HTML fragment or text; markup and entities are allowed. */
  readonly title?: unknown;
  /** An HTML fragment or text; markup and entities are allowed. */
  readonly snippet?: unknown;
}

/**
 * The normalised form of an absolute `http:` or `https:` URL, or undefined for anything else
 * (relative links, `javascript:`, `magnet:`, `data:`, `file:` and text that is no URL): an agent
 * is only ever handed links it could fetch.
 */
export function httpUrl(text: unknown): string | undefined {
  if (typeof text !== 'string') return undefined;
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/**
 * One result as every provider returns it: an http(s) URL, a plain-text title of at most
 * {@link MAX_TITLE_LENGTH} and a plain-text snippet of at most {@link MAX_SNIPPET_LENGTH} (empty
 * when the service sent none). Undefined when the URL is unusable or the title is empty once
 * cleaned, because such an entry is not a web result an agent can use.
 */
export function toSearchResult(served: ServedResult): SearchResult | undefined {
  const url = httpUrl(served.url);
  if (!url) return undefined;
  const title = plainText(typeof served.title === 'string' ? served.title : '', MAX_TITLE_LENGTH);
  if (!title) return undefined;
  return { title, url, snippet: plainText(typeof served.snippet === 'string' ? served.snippet : '', MAX_SNIPPET_LENGTH) };
}
