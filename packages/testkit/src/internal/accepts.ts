import { connect } from 'node:net';

/** Whether something accepts TCP connections on 127.0.0.1:port (tests check that a stopped server let go of its port). */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
