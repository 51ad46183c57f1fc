import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A response recorded from a real service, replayed byte for byte. */
export interface RecordedResponse {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  /** Text is sent as UTF-8; bytes as they are (for other charsets and binary bodies). */
  readonly body: string | Uint8Array;
}

/** A request the replay server received. */
export interface ReplayedRequest {
  readonly method: string;
  /** Path and query as sent, e.g. `/html/?q=rust`. */
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: Readonly<http.IncomingHttpHeaders>;
  readonly body: string;
}

/** An HTTP server on 127.0.0.1 that answers every request with the current recording. */
export interface ReplayServer {
  /** `http://127.0.0.1:<port>` */
  readonly baseUrl: string;
  readonly port: number;
  readonly requests: ReplayedRequest[];
  /** Sets the answer for the following requests. */
  respondWith(response: RecordedResponse | ((request: ReplayedRequest) => RecordedResponse)): void;
  close(): Promise<void>;
}

/** Starts a replay server bound to 127.0.0.1 only; it answers 404 until told otherwise. */
export async function startReplayServer(): Promise<ReplayServer> {
  const requests: ReplayedRequest[] = [];
  let answer: RecordedResponse | ((request: ReplayedRequest) => RecordedResponse) = {
    status: 404,
    body: 'no recording set',
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      const request: ReplayedRequest = {
        method: req.method ?? 'GET',
        path,
        query: new URL(path, 'http://replay.invalid').searchParams,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(request);
      const recorded = typeof answer === 'function' ? answer(request) : answer;
      res.writeHead(recorded.status, { ...recorded.headers });
      res.end(recorded.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    requests,
    respondWith: (response) => {
      answer = response;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
