import { Command, type Redis } from 'ioredis';

/**
 * A command whose RESP bytes are made here, in one buffer, and handed to ioredis as they are.
 *
 * Why (decision 0029): for a command with a Buffer argument ioredis collects the pieces of its RESP
 * form and copies them into a new buffer (`Command#toWritable`), and a pipeline copies all its
 * commands once more into one buffer for the socket (`Buffer.concat`): a chunk's parts, which go
 * out twice (the history XADD and their PUBLISH), were copied four times on the way. Here each
 * command is encoded once, straight from its arguments, and sent on the connection on its own
 * (`Redis#sendCommand` without a pipeline writes the command's bytes to the socket as they are).
 * The replies, their order and the errors are ioredis's as for any command: one reply per command,
 * in the order sent on the one connection.
 *
 * Standalone connections only: a cluster pipeline needs the commands' keys to pick its node, and
 * these commands tell ioredis none.
 */
class EncodedCommand extends Command {
  private readonly encoded: Buffer;

  constructor(name: string, encoded: Buffer) {
    super(name, [], { replyEncoding: 'utf8' });
    this.encoded = encoded;
  }

  override toWritable(): Buffer {
    return this.encoded;
  }
}

/** Bytes of `$<length>\r\n` for a bulk string of `length` bytes. */
function bulkHeadLength(length: number): number {
  return length < 10 ? 4 : length < 100 ? 5 : String(length).length + 3;
}

/**
 * The RESP form of `name args…` (an array of bulk strings), in one buffer: strings as UTF-8,
 * buffers copied once. Deliberately imperative: the parts of a chunk pass through here.
 */
export function encodeCommand(name: string, args: readonly (string | Buffer)[]): Buffer {
  let length = String(args.length + 1).length + 3 + bulkHeadLength(name.length) + name.length + 2;
  for (const arg of args) {
    const n = typeof arg === 'string' ? Buffer.byteLength(arg) : arg.length;
    length += bulkHeadLength(n) + n + 2;
  }
  // Parts are tens of KiB: a buffer of their own, not a slice of Node's 8 KiB pool.
  const out = length > 4096 ? Buffer.allocUnsafeSlow(length) : Buffer.allocUnsafe(length);
  let at = out.write(`*${args.length + 1}\r\n$${name.length}\r\n${name}\r\n`, 0, 'latin1');
  for (const arg of args) {
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
  if (at !== length) throw new Error(`encodeCommand wrote ${at} bytes of ${length} for ${name}`);
  return out;
}

/** Sends `name args…` as one encoded buffer on a standalone connection; resolves with its reply. */
export function sendEncoded(redis: Redis, name: string, args: readonly (string | Buffer)[]): Promise<unknown> {
  return sendEncodedBytes(redis, name, encodeCommand(name, args));
}

/** Sends a command already in its RESP form (e.g. {@link publishFrame}'s head, a part, its tail). */
export function sendEncodedBytes(redis: Redis, name: string, encoded: Buffer): Promise<unknown> {
  const command = new EncodedCommand(name, encoded);
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
