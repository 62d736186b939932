/**
 * Peers that go silent, on 127.0.0.1: a raw TCP server that accepts every connection and then
 * `silent` never writes a byte, or `headers` answers the first request's bytes with HTTP headers
 * promising a body and then stops (a server that froze mid-answer). Nothing is ever closed from
 * their side: the client has to give up on its own. `stop()` destroys every socket and closes.
 */
import { createServer, type Socket } from 'node:net';

export interface SilentServer {
  port: number;
  /** Connections accepted so far (the client did reach us). */
  readonly accepted: number;
  stop(): Promise<void>;
}

export async function startSilentServer(mode: 'silent' | 'headers'): Promise<SilentServer> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server = createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let answered = false;
    socket.on('data', () => {
      if (mode !== 'headers' || answered) return;
      answered = true;
      socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/x-git-upload-pack-advertisement\r\nContent-Length: 100000\r\n\r\n');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the silent server has no TCP address');
  return {
    port: address.port,
    get accepted() {
      return accepted;
    },
    stop: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
