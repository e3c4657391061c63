import { buildSchema, type GraphQLSchema } from 'graphql';

/** What the gateway tells its console (`GET /console/config.json`, apps/gateway/src/transport/console.ts). */
export interface ConsoleSettings {
  /** WebSocket path of graphql-transport-ws, e.g. `/graphql`. */
  readonly graphqlPath: string;
  readonly statsPath: string;
  /** `null` when the gateway runs with GATEWAY_METRICS=false: no latency or memory charts. */
  readonly metricsPath: string | null;
}

export interface ConsoleStart {
  readonly settings: ConsoleSettings;
  /**
   * Built from the gateway's SDL rather than introspected: introspection is off by default
   * (GATEWAY_ALLOW_INTROSPECTION), and the docs and autocompletion still work.
   */
  readonly schema: GraphQLSchema;
  /** `ws(s)://<this host><graphqlPath>`. */
  readonly websocketUrl: string;
}

/** Loads settings and schema from the gateway serving this page (relative URLs: it lives under /console/). */
export async function loadConsoleStart(location: Location = window.location): Promise<ConsoleStart> {
  const [settingsResponse, sdlResponse] = await Promise.all([fetch('./config.json'), fetch('./schema.graphql')]);
  if (!settingsResponse.ok) throw new Error(`GET config.json answered ${settingsResponse.status}: is this page served by a Wirestream gateway with GATEWAY_CONSOLE=true?`);
  if (!sdlResponse.ok) throw new Error(`GET schema.graphql answered ${sdlResponse.status}`);
  const settings = (await settingsResponse.json()) as ConsoleSettings;
  const schema = buildSchema(await sdlResponse.text());
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return { settings, schema, websocketUrl: `${scheme}//${location.host}${settings.graphqlPath}` };
}
