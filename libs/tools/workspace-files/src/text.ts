/** How much of a file is sniffed for a NUL byte to call it binary (as git and grep do). */
export const BINARY_SNIFF_BYTES = 8192;

export function looksBinary(head: Uint8Array): boolean {
  return head.subarray(0, BINARY_SNIFF_BYTES).includes(0);
}

/** The longest prefix of `text` that fits in `maxBytes` of UTF-8 without splitting a character. */
export function cutToBytes(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  let end = Math.max(0, maxBytes);
  // Step back to the start of a character: continuation bytes are 10xxxxxx.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}
