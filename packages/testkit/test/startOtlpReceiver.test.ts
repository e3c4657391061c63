import { describe, expect, it } from 'vitest';
import { startOtlpReceiver } from '../src/index.js';

describe('startOtlpReceiver', () => {
  it('answers an OTLP/JSON export with 200 and keeps the request; a protobuf one with an empty protobuf body', async () => {
    const receiver = await startOtlpReceiver();
    try {
      const json = await fetch(`${receiver.url}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"resourceSpans":[]}' });
      expect(json.status).toBe(200);
      expect(await json.text()).toBe('{}');
      const proto = await fetch(`${receiver.url}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body: new Uint8Array([10, 0]) });
      expect(proto.status).toBe(200);
      expect(proto.headers.get('content-type')).toBe('application/x-protobuf');
      expect(receiver.requests.map((r) => [r.path, r.contentType, r.body.toString('hex')])).toEqual([
        ['/v1/traces', 'application/json', Buffer.from('{"resourceSpans":[]}').toString('hex')],
        ['/v1/traces', 'application/x-protobuf', '0a00'],
      ]);
      expect(receiver.bytes()).toBe(22);
    } finally {
      await receiver.stop();
    }
  });

  it('keeps no bodies for a bench that only sinks spans', async () => {
    const receiver = await startOtlpReceiver({ keepBodies: false });
    await fetch(`${receiver.url}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(receiver.requests[0]?.body.length).toBe(0);
    expect(receiver.bytes()).toBe(2);
    await receiver.stop();
  });
});
