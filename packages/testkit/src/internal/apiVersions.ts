import { connect } from 'node:net';

/** Supported version range of one Kafka API, as a broker reports it. */
export interface ApiVersionRange {
  minVersion: number;
  maxVersion: number;
}

/**
 * Asks a broker which versions of each API it accepts (ApiVersions v0: the one version every
 * broker since 0.10 answers, kept by KIP-896 so old clients can still negotiate). Keyed by API key.
 *
 *   request:  int32 size | int16 api_key=18 | int16 version=0 | int32 correlation_id | int16 client_id=-1
 *   response: int32 size | int32 correlation_id | int16 error_code | int32 n | n × (int16 key, int16 min, int16 max)
 */
export function fetchApiVersions(
  host: string,
  port: number,
  { timeoutMs = 5_000 }: { timeoutMs?: number } = {},
): Promise<Map<number, ApiVersionRange>> {
  return new Promise((resolveVersions, reject) => {
    const socket = connect({ host, port });
    const chunks: Buffer[] = [];
    let received = 0;
    const fail = (error: Error): void => {
      socket.destroy();
      reject(error);
    };
    socket.setTimeout(timeoutMs, () => fail(new Error(`ApiVersions: no answer from ${host}:${port} within ${timeoutMs} ms`)));
    socket.once('error', fail);
    socket.once('connect', () => {
      const request = Buffer.alloc(14);
      request.writeInt32BE(10, 0);
      request.writeInt16BE(18, 4);
      request.writeInt16BE(0, 6);
      request.writeInt32BE(1, 8);
      request.writeInt16BE(-1, 12);
      socket.write(request);
    });
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
      if (received < 4) return;
      const buffer = Buffer.concat(chunks);
      const size = buffer.readInt32BE(0);
      if (buffer.length < 4 + size) return;
      socket.destroy();
      const errorCode = buffer.readInt16BE(8);
      if (errorCode !== 0) {
        reject(new Error(`ApiVersions: ${host}:${port} answered error_code ${errorCode}`));
        return;
      }
      const count = buffer.readInt32BE(10);
      const versions = new Map<number, ApiVersionRange>();
      for (let i = 0, at = 14; i < count; i += 1, at += 6) {
        versions.set(buffer.readInt16BE(at), {
          minVersion: buffer.readInt16BE(at + 2),
          maxVersion: buffer.readInt16BE(at + 4),
        });
      }
      resolveVersions(versions);
    });
  });
}
