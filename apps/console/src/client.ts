import { createWirestreamClient, type WirestreamClient } from '@wirestream/client';

export type ConnectionState =
  | { readonly kind: 'idle' }
  | { readonly kind: 'connecting' }
  | { readonly kind: 'connected' }
  | { readonly kind: 'closed'; readonly code: number; readonly reason: string };

/**
 * One @wirestream/client for the whole console: the playground and the live view share its socket,
 * and their subscriptions resume by themselves after a reconnect (a gateway restart, a dropped
 * network): no event missed or shown twice. The bearer token goes into `connection_init` as
 * `{ authorization: 'Bearer …' }`, which the gateway's jwt mode reads (an empty token: anonymous).
 */
export function createGatewayClient(url: string, token: string, onState: (state: ConnectionState) => void): WirestreamClient {
  const client = createWirestreamClient({
    url,
    // Connect on the first subscription, close a while after the last one ends.
    lazy: true,
    lazyCloseTimeout: 3_000, // 3 seconds
    retryAttempts: 10,
    token: () => token,
  });
  client.on('connecting', () => onState({ kind: 'connecting' }));
  client.on('connected', () => onState({ kind: 'connected' }));
  client.on('closed', (event) => {
    const { code, reason } = event as CloseEvent;
    onState({ kind: 'closed', code, reason });
  });
  return client;
}
