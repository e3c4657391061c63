import { describe, expect, it } from 'vitest';
import { chooseSubprotocol } from './subprotocols.js';

describe('chooseSubprotocol', () => {
  it('selects the one it speaks from an offer, none for no offer, and refuses the rest naming what it speaks', () => {
    expect(chooseSubprotocol('graphql-transport-ws')).toEqual({ ok: true, protocol: 'graphql-transport-ws' });
    expect(chooseSubprotocol(' mqtt ,graphql-transport-ws')).toEqual({ ok: true, protocol: 'graphql-transport-ws' });
    expect(chooseSubprotocol('')).toEqual({ ok: true, protocol: undefined });
    expect(chooseSubprotocol(' , ')).toEqual({ ok: true, protocol: undefined });
    const refused = chooseSubprotocol('mqtt');
    expect(refused).toEqual({
      ok: false,
      message: 'Subprotocol not acceptable: offered "mqtt"; this gateway speaks graphql-transport-ws, graphql-ws (subscriptions-transport-ws, deprecated) (Sec-WebSocket-Protocol)',
    });
    // Both offered: graphql-transport-ws is preferred; the legacy one only where it is served.
    expect(chooseSubprotocol('graphql-ws, graphql-transport-ws')).toEqual({ ok: true, protocol: 'graphql-transport-ws' });
    expect(chooseSubprotocol('graphql-ws')).toEqual({ ok: true, protocol: 'graphql-ws' });
    expect(chooseSubprotocol('graphql-ws', ['graphql-transport-ws'])).toMatchObject({ ok: false, message: expect.stringContaining('speaks graphql-transport-ws (') as unknown });
  });

  it('quotes at most 100 characters of a long offer', () => {
    const refused = chooseSubprotocol('x'.repeat(10_000));
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.message).toContain(`"${'x'.repeat(100)}"`);
  });
});
