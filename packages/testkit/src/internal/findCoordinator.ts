import { connect } from 'node:net';

/** COORDINATOR_NOT_AVAILABLE / NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS: ask again shortly. */
const RETRIABLE = new Set([14, 15, 16]);

/**
 * Asks a broker which node coordinates consumer group `groupId` (FindCoordinator v0; kafkajs has
 * no public call for it). Resolves with the node id, or undefined while the broker answers a
 * retriable error (no coordinator elected yet, or its partition of `__consumer_offsets` moving).
 *
 *   request:  int32 size | int16 api_key=10 | int16 version=0 | int32 correlation_id | int16 client_id=-1 | string group_id
 *   response: int32 size | int32 correlation_id | int16 error_code | int32 node_id | string host | int32 port
 */
export function findCoordinator(host: string, port: number, groupId: string, { timeoutMs = 5_000 }: { timeoutMs?: number } = {}): Promise<number | undefined> {
  return new Promise((resolveCoordinator, reject) => {
    const socket = connect({ host, port });
    const chunks: Buffer[] = [];
    let received = 0;
    const fail = (error: Error): void => {
      socket.destroy();
      reject(error);
    };
    socket.setTimeout(timeoutMs, () => fail(new Error(`FindCoordinator: no answer from ${host}:${port} within ${timeoutMs} ms`)));
    socket.once('error', fail);
    socket.once('connect', () => {
      const group = Buffer.from(groupId, 'utf8');
      const request = Buffer.alloc(16 + group.length);
      request.writeInt32BE(request.length - 4, 0);
      request.writeInt16BE(10, 4);
      request.writeInt16BE(0, 6);
      request.writeInt32BE(1, 8);
      request.writeInt16BE(-1, 12);
      request.writeInt16BE(group.length, 14);
      group.copy(request, 16);
      socket.write(request);
    });
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
      if (received < 4) return;
      const buffer = Buffer.concat(chunks);
      if (buffer.length < 4 + buffer.readInt32BE(0)) return;
      socket.destroy();
      const errorCode = buffer.readInt16BE(8);
      if (RETRIABLE.has(errorCode)) resolveCoordinator(undefined);
      else if (errorCode !== 0) reject(new Error(`FindCoordinator(${groupId}): ${host}:${port} answered error_code ${errorCode}`));
      else resolveCoordinator(buffer.readInt32BE(10));
    });
  });
}
