import type { DestinationStream } from 'pino';

/** One parsed log line. */
export type LogLine = Readonly<Record<string, unknown>>;

/** A pino destination that keeps every line in memory, parsed. For tests: read real output, no mocks. */
export interface MemorySink extends DestinationStream {
  /** Lines written so far, oldest first. */
  readonly lines: readonly LogLine[];
  /** Forgets the lines written so far. */
  clear(): void;
}

/**
 * Creates an in-memory log destination: `createLogger({ name, destination: sink })`, then assert
 * on `sink.lines`. pino writes synchronously to it, so lines are there as soon as the log call
 * returns.
 */
export function createMemorySink(): MemorySink {
  const lines: LogLine[] = [];
  return {
    lines,
    write(chunk: string): void {
      // pino writes one line per call; splitting still copes with a batching caller.
      for (const line of chunk.split('\n')) {
        if (line !== '') lines.push(JSON.parse(line) as LogLine);
      }
    },
    clear(): void {
      lines.length = 0;
    },
  };
}
