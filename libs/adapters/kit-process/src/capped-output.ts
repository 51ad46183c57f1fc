/**
 * Collects a stream up to a byte cap and counts (but drops) the rest, so a process that floods
 * its output costs a fixed amount of memory however much it writes.
 */
export class CappedOutput {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  /** Every byte the stream produced, kept or not. */
  seen = 0;

  constructor(private readonly cap: number) {}

  push(chunk: Buffer): void {
    this.seen += chunk.length;
    const room = this.cap - this.kept;
    if (room <= 0) return;
    // Copy a partial chunk so the rest of the (up to 64 KiB) pipe buffer is not retained.
    const part = chunk.length <= room ? chunk : Buffer.from(chunk.subarray(0, room));
    this.chunks.push(part);
    this.kept += part.length;
  }

  get truncated(): boolean {
    return this.seen > this.kept;
  }

  /** The kept bytes as UTF-8; a character cut in half by the cap is dropped, not mangled. */
  text(): string {
    const bytes = Buffer.concat(this.chunks, this.kept);
    return (this.truncated ? withoutPartialCharacter(bytes) : bytes).toString('utf8');
  }
}

/** Drops a trailing UTF-8 sequence that the cap cut short. */
export function withoutPartialCharacter(bytes: Buffer): Buffer {
  let i = bytes.length - 1;
  let continuation = 0;
  while (i >= 0 && continuation < 3 && ((bytes[i] ?? 0) & 0xc0) === 0x80) {
    i--;
    continuation++;
  }
  if (i < 0) return bytes;
  const lead = bytes[i] ?? 0;
  const length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return length > continuation + 1 ? bytes.subarray(0, i) : bytes;
}
