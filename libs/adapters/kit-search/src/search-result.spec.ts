import { describe, expect, it } from 'vitest';
import { httpUrl, MAX_SNIPPET_LENGTH, MAX_TITLE_LENGTH, toSearchResult } from './search-result.js';

describe('httpUrl', () => {
  it('normalises absolute http(s) URLs', () => {
    expect(httpUrl('https://Example.COM')).toBe('https://example.com/');
    expect(httpUrl('http://example.org/a b?c=d')).toBe('http://example.org/a%20b?c=d');
  });

  it('refuses everything an agent could not fetch', () => {
    for (const text of ['javascript:alert(1)', 'magnet:?xt=urn:btih:abc', 'data:text/html,x', 'file:///etc/passwd', 'ftp://x.org/', '/relative', 'no url', '']) {
      expect(httpUrl(text), text).toBeUndefined();
    }
    for (const value of [undefined, null, 42, { href: 'https://x.org/' }]) expect(httpUrl(value)).toBeUndefined();
  });
});

describe('toSearchResult', () => {
  it('builds a plain-text result from the fields a service sent', () => {
    expect(toSearchResult({ url: 'https://example.com/x', title: 'Example <b>Title</b>', snippet: 'A snippet &amp; more' })).toEqual({
      title: 'Example Title',
      url: 'https://example.com/x',
      snippet: 'A snippet & more',
    });
  });

  it('gives an empty snippet when the service sent none or no text', () => {
    for (const snippet of [undefined, null, 7, '', '<img src=x>']) {
      expect(toSearchResult({ url: 'https://example.com/', title: 'T', snippet })?.snippet).toBe('');
    }
  });

  it('drops entries without an http(s) URL or without a title once cleaned', () => {
    expect(toSearchResult({ url: 'magnet:?xt=urn:btih:abc', title: 'torrent' })).toBeUndefined();
    expect(toSearchResult({ url: 42, title: 'number' })).toBeUndefined();
    expect(toSearchResult({ url: 'https://example.com/', title: '  <b> </b> ' })).toBeUndefined();
    expect(toSearchResult({ url: 'https://example.com/', title: '<script>only code</script>' })).toBeUndefined();
    expect(toSearchResult({ url: 'https://example.com/' })).toBeUndefined();
  });

  it('caps title and snippet at the documented lengths', () => {
    const long = 'word '.repeat(400);
    const result = toSearchResult({ url: 'https://example.com/', title: long, snippet: long });
    expect(result?.title.length).toBe(MAX_TITLE_LENGTH);
    expect(result?.snippet.length).toBeLessThanOrEqual(MAX_SNIPPET_LENGTH);
    expect(result?.snippet.endsWith('…')).toBe(true);
    expect([MAX_TITLE_LENGTH, MAX_SNIPPET_LENGTH]).toEqual([300, 600]);
  });
});
