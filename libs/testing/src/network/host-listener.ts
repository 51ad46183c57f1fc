import { connect, createServer, type Server } from 'node:net';

/** The line a {@link HostListener} answers every connection with. */
export const HOST_LISTENER_GREETING = 'hello from the host\n';

/**
 * A TCP server on the host that sandbox tests try to reach from inside a sandbox: it counts the
 * connections it accepts and answers each with {@link HOST_LISTENER_GREETING}, so a test can show
 * both that the host reaches it and that the sandbox does not.
 */
export interface HostListener {
  readonly port: number;
  /** Connections accepted so far. */
  connections(): number;
  /** The control: connects from the host itself over loopback and returns what the listener said. */
  greetingFromHost(): Promise<string>;
  close(): Promise<void>;
}

/** Starts a {@link HostListener} on `host` (`127.0.0.1` by default; `::` for every address). */
export async function startHostListener(host = '127.0.0.1'): Promise<HostListener> {
  let accepted = 0;
  const server: Server = createServer((socket) => {
    accepted++;
    socket.end(HOST_LISTENER_GREETING);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as { port: number }).port;
  return {
    port,
    connections: () => accepted,
    greetingFromHost: () =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1');
        let data = '';
        socket.on('data', (chunk: Buffer) => (data += chunk.toString()));
        socket.on('end', () => resolve(data));
        socket.on('error', reject);
      }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
