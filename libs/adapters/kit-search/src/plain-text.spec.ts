import { describe, expect, it } from 'vitest';
import { clipText, plainText } from './plain-text.js';

const LONE_SURROGATE = /\p{Cs}/u;

describe('plainText', () => {
  it('strips tags and decodes entities (the SearXNG repro)', () => {
    expect(plainText('Example <b>Title</b>', 300)).toBe('Example Title');
    expect(plainText('A snippet &amp; more', 600)).toBe('A snippet & more');
  });

  it('drops an element with an event handler, whatever it would run', () => {
    expect(plainText('Safe<img src=x onerror=alert(1)> text', 600)).toBe('Safe text');
    expect(plainText('<svg onload="alert(1)"><a xlink:href="javascript:alert(2)">link</a></svg> ok', 600)).toBe('link ok');
  });

  it('drops the content of script, style and the other hidden elements', () => {
    expect(plainText('<script>alert(1)</script>visible<style>p { color: red }</style>', 600)).toBe('visible');
    expect(plainText('a<noscript><b>no</b></noscript>b<template><i>t</i></template>c', 600)).toBe('abc');
    expect(plainText('x<iframe><b>frame</b></iframe><xmp><b>raw</b></xmp>y', 600)).toBe('xy');
    expect(plainText('<SCRIPT type="module">import "x"</SCRIPT>shout', 600)).toBe('shout');
  });

  it('decodes entities exactly once', () => {
    expect(plainText('&lt;b&gt; is bold', 600)).toBe('<b> is bold');
    expect(plainText('&amp;amp; &amp;lt;', 600)).toBe('&amp; &lt;');
    expect(plainText('&lt;script&gt;alert(1)&lt;/script&gt;', 600)).toBe('<script>alert(1)</script>');
  });

  it('decodes named, decimal and hex entities, with and without the legacy missing semicolon', () => {
    expect(plainText('caf&eacute; &#233; &#xE9; &#XE9; &copy 2024 &hellip; &mdash; &quot;q&quot; &#39;s&#39;', 600)).toBe(
      `café é é é © 2024 … — "q" 's'`,
    );
    expect(plainText('&#128512; &#x1F600;', 600)).toBe('😀 😀');
    // Invalid code points decode to U+FFFD, as a browser shows them, never to a NUL or a lone surrogate.
    expect(plainText('a&#0;b&#xD800;c&#x110000;d', 600)).toBe('a\uFFFDb\uFFFDc\uFFFDd');
    // Not an entity: left as it is.
    expect(plainText('AT&T &unknown; 5 & 6', 600)).toBe('AT&T &unknown; 5 & 6');
  });

  it('keeps the text of comments out and block boundaries in', () => {
    expect(plainText('a<!-- hidden -->b<![CDATA[c]]>d', 600)).toBe('abd');
    expect(plainText('line one<br>line two<p>para</p><p>graph</p><li>item</li>', 600)).toBe('line one line two para graph item');
    expect(plainText('<b>bold</b><i>italic</i>', 600)).toBe('bolditalic'); // inline elements join like a browser shows them
  });

  it('turns &nbsp; and other white space into single spaces and trims', () => {
    expect(plainText('  Tom&nbsp;&amp;&nbsp;Jerry \n\t <br>  ', 600)).toBe('Tom & Jerry');
  });

  it('copes with broken markup', () => {
    expect(plainText('unclosed <b>bold <i>italic', 600)).toBe('unclosed bold italic');
    expect(plainText('stray </div></p> closers', 600)).toBe('stray closers');
    expect(plainText('a < b and c > d', 600)).toBe('a < b and c > d');
    expect(plainText('cut <img src=x onerr', 600)).toBe('cut');
  });

  it('leaves text without markup alone but for white space', () => {
    expect(plainText('Rust > C++ ?', 600)).toBe('Rust > C++ ?');
    expect(plainText('', 600)).toBe('');
  });

  it('caps the decoded text, not the markup', () => {
    const text = plainText(`<b>${'x'.repeat(50)}</b>`, 50);
    expect(text).toBe('x'.repeat(50));
    expect(plainText(`&amp;${'y'.repeat(50)}`, 20)).toBe(`&${'y'.repeat(18)}…`);
  });
});

describe('clipText', () => {
  it('collapses white space and control characters to one space', () => {
    expect(clipText(' a \n\n b\t\u0000c\u001b[31md\u0085e\u2028f ', 100)).toBe('a b c [31md e f');
  });

  it('does not decode anything: the text is already plain', () => {
    expect(clipText('&amp; <b>', 100)).toBe('&amp; <b>');
  });

  it('keeps text up to max as it is and cuts longer text with an ellipsis within max', () => {
    expect(clipText('abcde', 5)).toBe('abcde');
    expect(clipText('abcdef', 5)).toBe('abcd…');
    expect(clipText('ab   cdef', 5)).toBe('ab c…');
    expect(clipText('abc  def', 5)).toBe('abc…'); // no space before the ellipsis
    expect(clipText('abcdef', 1)).toBe('…');
  });

  it('never cuts a surrogate pair', () => {
    for (let max = 1; max <= 12; max++) {
      const text = clipText('a😀😀😀😀😀😀😀😀', max);
      expect(text.length, String(max)).toBeLessThanOrEqual(max);
      expect(text, String(max)).not.toMatch(LONE_SURROGATE);
    }
    expect(clipText('😀😀😀😀', 4)).toBe('😀…');
    expect(clipText('a😀😀😀', 3)).toBe('a…');
  });

  it('cuts between emoji sequences and keeps an accent with its letter', () => {
    const family = '👨‍👩‍👧'; // three emoji joined by ZWJ: one character on screen, 8 code units
    expect(clipText(`ab${family}${family}`, 12)).toBe(`ab${family}…`);
    expect(clipText(`ab${family}${family}`, 9)).toBe('ab…');
    expect(clipText('cafe\u0301s', 5)).toBe('caf…'); // e + combining acute stays whole
    expect(clipText('a👍🏻b', 5)).toBe('a…'); // a skin tone is not split from its hand
    expect(clipText('a👍🏻bc', 6)).toBe('a👍🏻…');
  });

  it('falls back to a code-point cut when one character is longer than the budget', () => {
    const zalgo = `e${'\u0301'.repeat(40)}`;
    const text = clipText(zalgo, 10);
    expect(text.length).toBe(10);
    expect(text.endsWith('…')).toBe(true);
  });

  it('replaces lone surrogates so the result is well-formed', () => {
    expect(clipText('a\uD800b\uDC00c', 100)).toBe('a\uFFFDb\uFFFDc');
  });

  it('refuses a max that is not a positive integer', () => {
    for (const max of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => clipText('abc', max), String(max)).toThrow(RangeError);
      expect(() => plainText('abc', max), String(max)).toThrow(RangeError);
    }
  });
});
