import { describe, expect, it } from 'vitest';
import { CappedOutput, withoutPartialCharacter } from './capped-output.js';

const bytes = (text: string): Buffer => Buffer.from(text, 'utf8');

describe('CappedOutput', () => {
  it('keeps everything under the cap and is not truncated', () => {
    const out = new CappedOutput(16);
    out.push(bytes('hello '));
    out.push(bytes('world'));
    expect(out.text()).toBe('hello world');
    expect(out.seen).toBe(11);
    expect(out.truncated).toBe(false);
  });

  it('is not truncated when the output fills the cap exactly', () => {
    const out = new CappedOutput(5);
    out.push(bytes('ab'));
    out.push(bytes('cde'));
    expect(out.text()).toBe('abcde');
    expect(out.truncated).toBe(false);
  });

  it('keeps the first cap bytes across chunks, counts the rest and marks the stream truncated', () => {
    const out = new CappedOutput(5);
    out.push(bytes('abc'));
    out.push(bytes('defgh'));
    out.push(bytes('ijklmnop'));
    expect(out.text()).toBe('abcde');
    expect(out.seen).toBe(16);
    expect(out.truncated).toBe(true);
  });

  it('copies a chunk it cuts, so a large pipe buffer is not retained behind the kept bytes', () => {
    const chunk = bytes('0123456789');
    const out = new CappedOutput(4);
    out.push(chunk);
    chunk.fill(0x78); // 'x': a view into `chunk` would now read "xxxx".
    expect(out.text()).toBe('0123');
  });

  it.each([
    ['two-byte', 'é'],
    ['three-byte', '€'],
    ['four-byte', '😀'],
  ])('drops a %s character the cap cuts at any byte, never emitting U+FFFD', (_kind, char) => {
    const width = Buffer.byteLength(char);
    for (let inside = 1; inside < width; inside++) {
      const out = new CappedOutput(1 + inside);
      out.push(bytes(`a${char}b`));
      expect(out.text(), `cut after ${inside} of ${width} bytes`).toBe('a');
      expect(out.truncated).toBe(true);
    }
    const whole = new CappedOutput(1 + width);
    whole.push(bytes(`a${char}b`));
    expect(whole.text()).toBe(`a${char}`);
    expect(whole.truncated).toBe(true);
  });

  it('yields the longest whole-character prefix for every cap, whatever the chunking', () => {
    const text = 'aé€😀zé😀€';
    const all = bytes(text);
    for (let cap = 1; cap <= all.length + 1; cap++) {
      const out = new CappedOutput(cap);
      // One byte per chunk: characters arrive split across pushes, as they do from a pipe.
      for (const byte of all) out.push(Buffer.of(byte));
      let expected = '';
      for (const char of text) {
        if (Buffer.byteLength(expected + char) > cap) break;
        expected += char;
      }
      expect(out.text(), `cap ${cap}`).toBe(expected);
      expect(out.truncated).toBe(cap < all.length);
    }
  });
});

describe('withoutPartialCharacter', () => {
  it('leaves complete text alone, ASCII or multi-byte', () => {
    for (const text of ['', 'abc', 'é', '€', '😀', 'a😀']) {
      expect(withoutPartialCharacter(bytes(text)).toString('utf8')).toBe(text);
    }
  });

  it('removes only the trailing sequence that is cut short', () => {
    const emoji = bytes('😀');
    expect(withoutPartialCharacter(Buffer.concat([bytes('ok'), emoji.subarray(0, 1)]))).toEqual(bytes('ok'));
    expect(withoutPartialCharacter(Buffer.concat([bytes('ok'), emoji.subarray(0, 3)]))).toEqual(bytes('ok'));
    expect(withoutPartialCharacter(Buffer.concat([bytes('é'), bytes('€').subarray(0, 2)]))).toEqual(bytes('é'));
  });
});
