/**
 * Does uWS's dedicated compressor keep its window across messages? (decision 0011: why
 * GATEWAY_COMPRESSION offers `shared` only.) Sends the same 572-byte JSON message 20 times with
 * each compressor to a `ws` client that offers permessage-deflate, and prints the bytes the client's
 * TCP socket read per message. With context takeover, every message after the first would cost a
 * few bytes; without it, each costs about what the first does.
 */
import net from 'node:net';
import uWS from 'uWebSockets.js';
import WebSocket from 'ws';
import type { MicroBench } from './scenario.js';

const MESSAGES = 20;
const message = JSON.stringify({
  title: 'Signed Vinyl Collection',
  words: Array.from({ length: 60 }, (_, i) => `word${(i * 7_919) % 1_000}`).join(' '),
  urls: ['https://img.wirestream.example/lst-000003/1.jpg'],
});

const COMPRESSORS: Record<string, number> = {
  SHARED_COMPRESSOR: uWS.SHARED_COMPRESSOR,
  DEDICATED_COMPRESSOR_3KB: uWS.DEDICATED_COMPRESSOR_3KB,
  DEDICATED_COMPRESSOR_32KB: uWS.DEDICATED_COMPRESSOR_32KB,
  DEDICATED_COMPRESSOR_256KB: uWS.DEDICATED_COMPRESSOR_256KB,
};

/** Bytes per message the client read for one compressor, and the extension the server answered. */
function measure(compression: number): Promise<{ bytes: number; extensions: string }> {
  return new Promise((resolve, reject) => {
    const app = uWS.App();
    app.ws('/*', {
      compression: compression | uWS.SHARED_DECOMPRESSOR,
      open: (ws) => {
        // Each message once, as the gateway sends frames (one send per frame, compress = true).
        setTimeout(() => {
          for (let i = 0; i < MESSAGES; i++) ws.send(message, false, true);
        }, 50);
      },
    });
    app.listen('127.0.0.1', 0, (listenSocket) => {
      if (!listenSocket) return reject(new Error('could not listen'));
      const port = uWS.us_socket_local_port(listenSocket);
      let socket: net.Socket | undefined;
      let before = 0;
      let received = 0;
      const client = new WebSocket(`ws://127.0.0.1:${port}/`, {
        perMessageDeflate: true,
        createConnection: ((options: net.NetConnectOpts) => (socket = net.createConnection(options))) as typeof net.createConnection,
      });
      client.on('open', () => (before = socket?.bytesRead ?? 0));
      client.on('error', reject);
      client.on('message', () => {
        if (++received < MESSAGES) return;
        const bytes = ((socket?.bytesRead ?? 0) - before) / MESSAGES;
        const { extensions } = client;
        client.close();
        uWS.us_listen_socket_close(listenSocket);
        resolve({ bytes, extensions });
      });
    });
  });
}

export const uwsCompressors: MicroBench = {
  description: "bytes per message of the same message with each uWS compressor: why there is no dedicated-compressor mode (decision 0011)",
  options: {},
  async run() {
    const lines = [`${MESSAGES} identical messages of ${message.length} bytes; bytes read by the client per message:`];
    for (const [name, compression] of Object.entries(COMPRESSORS)) {
      const { bytes, extensions } = await measure(compression);
      lines.push(`  ${name.padEnd(28)} ${bytes.toFixed(0).padStart(5)} B   (${extensions})`);
    }
    return lines.join('\n');
  },
};
