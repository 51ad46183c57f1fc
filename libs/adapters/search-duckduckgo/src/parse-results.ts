import * as cheerio from 'cheerio';
import type { SearchResult } from '@toolgate/contracts';
import { httpUrl, toSearchResult } from '@toolgate/adapter-kit-search';

/** What a DuckDuckGo HTML page turned out to be. */
export type ParsedPage =
  | { readonly kind: 'results'; readonly results: SearchResult[] }
  | { readonly kind: 'empty' }
  | { readonly kind: 'challenge' }
  | { readonly kind: 'unrecognised' };

/**
 * Parses the results page of `html.duckduckgo.com/html/`. Organic results are `.result` blocks
 * whose title link goes through DuckDuckGo's `/l/?uddg=<target>` redirector; ads are
 * `.result--ad` blocks linking to `/y.js` and are skipped. A page with neither results nor the
 * "No results." marker is reported as unrecognised rather than as an empty answer, so a layout
 * change shows up as an error instead of silently returning nothing.
 */
export function parseDuckDuckGoHtml(html: string): ParsedPage {
  const $ = cheerio.load(html);
  if ($('#challenge-form, .anomaly-modal__modal').length > 0) return { kind: 'challenge' };

  const results: SearchResult[] = [];
  $('.result').each((_, element) => {
    const block = $(element);
    if (block.hasClass('result--ad') || block.hasClass('result--no-result') || block.find('.badge--ad').length > 0) return;
    const link = block.find('a.result__a').first();
    // The inner HTML, re-serialised by cheerio, goes to the kit, which parses it once more: the
    // page's entities are then decoded exactly once (`&amp;amp;` reads `&amp;`), and <script>,
    // <style> and <br> inside a title or snippet are treated the way every provider treats them.
    const result = toSearchResult({
      url: decodeResultLink(link.attr('href')),
      title: link.html(),
      snippet: block.find('.result__snippet').first().html(),
    });
    if (result) results.push(result);
  });
  if (results.length > 0) return { kind: 'results', results };
  if ($('.no-results, .result--no-result').length > 0) return { kind: 'empty' };
  return { kind: 'unrecognised' };
}

/**
 * The target of a result link: `//duckduckgo.com/l/?uddg=<url-encoded target>&rut=…` carries it
 * in `uddg`; a direct http(s) link is taken as it is. Ad links (`/y.js`), other DuckDuckGo pages
 * and non-http targets give undefined.
 */
export function decodeResultLink(href: string | undefined): string | undefined {
  if (!href) return undefined;
  let link: URL;
  try {
    link = new URL(href, 'https://duckduckgo.com');
  } catch {
    return undefined;
  }
  if (link.hostname === 'duckduckgo.com' || link.hostname.endsWith('.duckduckgo.com')) {
    if (link.pathname !== '/l/') return undefined;
    const target = link.searchParams.get('uddg');
    return target ? httpUrl(target) : undefined;
  }
  return httpUrl(link.href);
}
