import type { ServerResponse } from 'node:http';

/** How long one write may wait for the client to take bytes before the response is given up. */
export const DEFAULT_WRITE_STALL_MS = 30_000;

/** The largest slice of a whole body written at once, so a slow but steady reader keeps resetting the stall bound. */
const SLICE_BYTES = 64 * 1024;

/** What a bounded wait for the client ended with. */
type WriteWait = 'drained' | 'closed' | 'stalled';

/** Waits until the response can take more, closes, or `stallMs` pass; whichever comes first removes the others. */
function whenWritable(res: ServerResponse, stallMs: number): Promise<WriteWait> {
  return new Promise((resolve) => {
    const settle = (outcome: WriteWait): void => {
      clearTimeout(timer);
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(outcome);
    };
    const onDrain = (): void => settle('drained');
    const onClose = (): void => settle('closed');
    const timer = setTimeout(() => settle('stalled'), stallMs);
    res.once('drain', onDrain);
    res.once('close', onClose);
  });
}

/**
 * After `end()`: a response the client has not taken within `stallMs` is destroyed, so a client
 * that never reads cannot hold the socket and the unsent bytes forever.
 */
function destroyIfUnfinished(res: ServerResponse, stallMs: number): void {
  if (res.writableFinished || res.destroyed) return;
  const timer = setTimeout(() => res.destroy(), stallMs);
  const clear = (): void => {
    clearTimeout(timer);
    res.off('finish', clear);
    res.off('close', clear);
  };
  res.once('finish', clear);
  res.once('close', clear);
}

/** Whether a `content-type` names an event stream (parameters and case ignored). */
function isEventStream(contentType: string | undefined): boolean {
  return contentType !== undefined && contentType.split(';', 1)[0]!.trim().toLowerCase() === 'text/event-stream';
}

/**
 * Writes `bytes` in slices, each within the stall bound; false when the client stalled or went
 * away (the response is then destroyed).
 */
async function writeSlices(res: ServerResponse, bytes: Uint8Array, stallMs: number): Promise<boolean> {
  for (let at = 0; at < bytes.byteLength; at += SLICE_BYTES) {
    if (res.destroyed) return false;
    if (!res.write(bytes.subarray(at, at + SLICE_BYTES)) && (await whenWritable(res, stallMs)) !== 'drained') {
      res.destroy();
      return false;
    }
  }
  return !res.destroyed;
}

/**
 * Copies a web `Response` onto the node response. A whole body (JSON) is read at once and sent
 * with its length; an event stream is flushed event by event as the SDK produces it, a slow
 * reader applying back-pressure. Every write is bounded: a client that takes no bytes for
 * `stallMs` gets its response destroyed and the body cancelled, and the response's `close`
 * reaches whoever holds the call (the MCP route aborts it).
 */
export async function writeWebResponse(res: ServerResponse, response: Response, extraHeaders: Record<string, string>, stallMs = DEFAULT_WRITE_STALL_MS): Promise<void> {
  const headers: Record<string, string> = { ...extraHeaders };
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  if (!response.body) {
    res.writeHead(response.status, headers);
    res.end();
    return;
  }
  if (!isEventStream(headers['content-type'])) {
    // One buffer and one write: no stream machinery per chunk for the common JSON answer.
    const bytes = new Uint8Array(await response.arrayBuffer());
    headers['content-length'] = String(bytes.byteLength);
    res.writeHead(response.status, headers);
    if (bytes.byteLength <= SLICE_BYTES) res.end(bytes);
    else if (await writeSlices(res, bytes, stallMs)) res.end();
    destroyIfUnfinished(res, stallMs);
    return;
  }
  res.writeHead(response.status, headers);
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      // Flush each SSE event at once; a slow reader applies back-pressure to the SDK, within the bound.
      if (!(await writeSlices(res, value, stallMs))) {
        await reader.cancel().catch(() => undefined);
        return;
      }
    }
    res.end();
    destroyIfUnfinished(res, stallMs);
  } catch {
    // The body failed or the client went away mid-stream: nothing left to answer.
    res.destroy();
  } finally {
    reader.releaseLock();
  }
}
