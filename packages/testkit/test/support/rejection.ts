// What the secured-server tests share: the error a refused connection or command rejects with.

/** The error a promise rejects with (fails the test when it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<Error & Record<string, unknown>> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof Error) return error as Error & Record<string, unknown>;
    throw new Error(`rejected with a non-Error: ${String(error)}`);
  }
  throw new Error('expected a rejection, but it resolved');
}
