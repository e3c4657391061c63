import { useCallback } from 'react';
import { GraphiQL, type GraphiQLProps } from 'graphiql';
import 'graphiql/graphiql.css';
import type { WirestreamClient } from '@wirestream/client';
import type { GraphQLSchema } from 'graphql';
import type { SubscriptionExample } from './examples';

type Fetcher = GraphiQLProps['fetcher'];

export interface PlaygroundProps {
  readonly client: WirestreamClient;
  readonly schema: GraphQLSchema;
  readonly examples: readonly SubscriptionExample[];
}

/**
 * GraphiQL over the console's @wirestream/client (graphql-ws underneath). This module and GraphiQL's CSS load only when the
 * playground is first opened (a separate chunk), so the live view and vital signs stay light.
 */
export default function Playground({ client, schema, examples }: PlaygroundProps) {
  const fetcher = useCallback<Fetcher>(
    ({ query, variables, operationName }) =>
      // GraphiQL's type says GraphQLError; on the wire (and in what it renders) errors are the
      // formatted JSON objects graphql-ws yields.
      client.iterate({
        query,
        ...(variables ? { variables: variables as Record<string, unknown> } : {}),
        ...(operationName ? { operationName } : {}),
      }) as unknown as ReturnType<Fetcher>,
    [client],
  );
  return (
    <GraphiQL
      fetcher={fetcher}
      schema={schema}
      defaultTabs={examples.map((e) => ({ query: e.query }))}
      // Headers do not travel over a WebSocket: the token field in the console bar goes into connection_init.
      isHeadersEditorEnabled={false}
      forcedTheme="light"
    />
  );
}
