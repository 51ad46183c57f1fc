// A cheap upper bound on how many values a JSON text holds, found with one byte scan and no
// parse, so a message whose parse and checks would hold the event loop for long can be refused
// before anything reads it (ADR 0071).

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Counts the bytes `{`, `[`, `,` and `:` outside JSON strings in `bytes`: every value but the
 * first follows one of them, so the count bounds the values (and keys) a parse would build.
 * Stops once the count passes `stopAbove` (returning that count), so a hostile text costs no
 * more than the bytes up to that point. Strings are jumped over with native searches for their
 * closing quote, so a text made mostly of strings (a file's contents) costs little. Linear.
 */
export function structuralCount(bytes: Uint8Array, stopAbove = Number.MAX_SAFE_INTEGER): number {
  const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const length = buffer.length;
  let count = 0;
  let i = 0;
  while (i < length) {
    const byte = buffer[i] as number;
    if (byte === QUOTE) {
      // To the closing quote: one not preceded by an odd run of backslashes.
      let from = i + 1;
      for (;;) {
        const quote = buffer.indexOf(QUOTE, from);
        if (quote === -1) return count;
        let slashes = 0;
        while (quote - slashes - 1 >= from && buffer[quote - slashes - 1] === BACKSLASH) slashes++;
        from = quote + 1;
        if (slashes % 2 === 0) break;
      }
      i = from;
      continue;
    }
    // 0x7b `{`, 0x5b `[`, 0x2c `,`, 0x3a `:`.
    if (byte === 0x7b || byte === 0x5b || byte === 0x2c || byte === 0x3a) {
      count++;
      if (count > stopAbove) return count;
    }
    i++;
  }
  return count;
}
