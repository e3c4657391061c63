import { Command, type Redis } from 'ioredis';

/**
 * A command whose RESP bytes are made here and handed to ioredis as they are.
 *
 * Why (decision 0029): for a command with a Buffer argument ioredis collects the pieces of its RESP
 * form and copies them into a new buffer (`Command#toWritable`), and a pipeline copies all its
 * commands once more into one buffer for the socket (`Buffer.concat`): a chunk's parts, which go
 * out twice (the history XADD and their PUBLISH), were copied four times on the way. Here each
 * command is encoded once, straight from its arguments, and sent on the connection on its own
 * (`Redis#sendCommand` without a pipeline writes the command's bytes to the socket as they are);
 * a part inside the XADD is not even copied: the command goes out in pieces, the part as it is.
 * The replies, their order and the errors are ioredis's as for any command: one reply per command,
 * in the order sent on the one connection.
 *
 * Standalone connections only: a cluster pipeline needs the commands' keys to pick its node, and
 * these commands tell ioredis none.
 */
class EncodedCommand extends Command {
  private readonly pieces: readonly Buffer[];

  constructor(name: string, pieces: readonly Buffer[]) {
    super(name, [], { replyEncoding: 'utf8' });
    this.pieces = pieces;
  }

  /**
   * ioredis writes what this returns to `socket` right away, on the connection the command is queued
   * on (also when it replays its offline queue). A command in several pieces writes all but its last
   * piece there first, in order: its large arguments go to the socket as they are, never copied into
   * one buffer. Anything that is not a socket gets the pieces joined.
   */
  override toWritable(socket: object): Buffer {
    const { pieces } = this;
    const last = pieces.length - 1;
    if (last === 0) return pieces[0] as Buffer;
    if (!isWritable(socket)) return Buffer.concat(pieces);
    // Corked until the end of this tick: the pieces (and the commands sent after them) go out in one writev, not a write each.
    socket.cork();
    process.nextTick(uncork, socket);
    for (let i = 0; i < last; i++) socket.write(pieces[i] as Buffer);
    return pieces[last] as Buffer;
  }
}

interface CorkableSocket {
  write(chunk: Buffer): boolean;
  cork(): void;
  uncork(): void;
}

function isWritable(socket: object): socket is CorkableSocket {
  const { write, cork, uncork } = socket as Partial<Record<keyof CorkableSocket, unknown>>;
  return typeof write === 'function' && typeof cork === 'function' && typeof uncork === 'function';
}

function uncork(socket: CorkableSocket): void {
  socket.uncork();
}

/** Bytes of `$<length>\r\n` for a bulk string of `length` bytes. */
function bulkHeadLength(length: number): number {
  return length < 10 ? 4 : length < 100 ? 5 : String(length).length + 3;
}

/**
 * The RESP form of `name args…` (an array of bulk strings), in one buffer: strings as UTF-8,
 * buffers copied once.
 */
export function encodeCommand(name: string, args: readonly (string | Buffer)[]): Buffer {
  const pieces = encodeCommandPieces(name, args, Infinity);
  return pieces[0] as Buffer;
}

/**
 * The RESP form of `name args…` in pieces: buffer arguments of at least `inlineLimit` bytes are
 * pieces of their own (views, not copies); everything between them is encoded into one buffer per
 * stretch (strings as UTF-8, smaller buffers copied). Deliberately imperative: a chunk's parts pass here.
 */
export function encodeCommandPieces(name: string, args: readonly (string | Buffer)[], inlineLimit = INLINE_LIMIT): Buffer[] {
  const pieces: Buffer[] = [];
  let text = `*${args.length + 1}\r\n$${name.length}\r\n${name}\r\n`;
  let from = 0;
  // Strings and small buffers between the large ones, encoded together once a large one (or the end) is reached.
  const flush = (to: number, trailer: string): void => {
    let length = Buffer.byteLength(text) + Buffer.byteLength(trailer);
    for (let i = from; i < to; i++) {
      const arg = args[i] as string | Buffer;
      const n = typeof arg === 'string' ? Buffer.byteLength(arg) : arg.length;
      length += bulkHeadLength(n) + n + 2;
    }
    // Stretches holding a part are tens of KiB: a buffer of their own, not a slice of Node's 8 KiB pool.
    const out = length > 4096 ? Buffer.allocUnsafeSlow(length) : Buffer.allocUnsafe(length);
    let at = out.write(text, 0, 'utf8');
    for (let i = from; i < to; i++) {
      const arg = args[i] as string | Buffer;
      if (typeof arg === 'string') {
        const n = Buffer.byteLength(arg);
        at += out.write(`$${n}\r\n`, at, 'latin1');
        at += out.write(arg, at, 'utf8');
      } else {
        at += out.write(`$${arg.length}\r\n`, at, 'latin1');
        // TypedArray#set (a memmove), not Buffer#copy (argument handling in JS).
        out.set(arg, at);
        at += arg.length;
      }
      out[at++] = 0x0d;
      out[at++] = 0x0a;
    }
    at += out.write(trailer, at, 'latin1');
    if (at !== length) throw new Error(`encodeCommandPieces wrote ${at} bytes of ${length} for ${name}`);
    pieces.push(out);
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string | Buffer;
    if (typeof arg === 'string' || arg.length < inlineLimit) continue;
    flush(i, `$${arg.length}\r\n`);
    pieces.push(arg);
    text = '\r\n';
    from = i + 1;
  }
  flush(args.length, '');
  return pieces;
}

/** Buffer arguments from this size on are written to the socket as they are (a chunk's parts), not copied. */
const INLINE_LIMIT = 16 * 1024;

/** Sends `name args…` encoded by us (large buffer arguments as pieces of their own) on a standalone connection; resolves with its reply. */
export function sendEncoded(redis: Redis, name: string, args: readonly (string | Buffer)[]): Promise<unknown> {
  return sendPieces(redis, name, encodeCommandPieces(name, args));
}

/** Sends a command already in its RESP form (e.g. {@link publishFrame}'s head, a part, its tail). */
export function sendEncodedBytes(redis: Redis, name: string, encoded: Buffer): Promise<unknown> {
  return sendPieces(redis, name, [encoded]);
}

function sendPieces(redis: Redis, name: string, pieces: readonly Buffer[]): Promise<unknown> {
  const command = new EncodedCommand(name, pieces);
  void redis.sendCommand(command);
  return command.promise;
}

/**
 * The RESP form of `PUBLISH <channel> <message>` around a message of `length` bytes: the head goes
 * before it, `\r\n` after it. With encodeEnvelopeBatch's frame, a part is written straight into its
 * PUBLISH command, no copy more.
 */
export function publishHead(channel: string, length: number): string {
  return `*3\r\n$7\r\npublish\r\n$${Buffer.byteLength(channel)}\r\n${channel}\r\n$${length}\r\n`;
}

export const PUBLISH_TAIL = '\r\n';
