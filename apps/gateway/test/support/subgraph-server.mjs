// A real federation subgraph for the look-up tests, in its own Node process (no Vite: @apollo/subgraph
// is CommonJS and must share graphql-js with what executes its schema): buildSubgraphSchema (MIT) on
// node:http. Prints its port; GET /counts answers what it was asked.
//   node test/support/subgraph-server.mjs [port] [maxDelayMs]
import { createServer } from 'node:http';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { graphql, parse } from 'graphql';

const [port = '0', maxDelayMs = '0'] = process.argv.slice(2);
const counts = { requests: 0, representations: 0, keys: [] };

async function profile(id) {
  await new Promise((resolve) => setTimeout(resolve, Math.random() * Number(maxDelayMs)));
  if (id.startsWith('missing-')) return null;
  if (id.startsWith('broken-')) throw new Error(`profile store failed for ${id}`);
  return { id, title: `Title of ${id}`, views: id.length };
}

const schema = buildSubgraphSchema([{
  typeDefs: parse(`
    extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
    type ListingProfile @key(fields: "id") {
      id: ID!
      title: String
      views: Int
    }
    type Query { profile(id: ID!): ListingProfile }
  `),
  resolvers: {
    Query: { profile: (_, { id }) => profile(id) },
    ListingProfile: { __resolveReference: (ref) => profile(ref.id) },
  },
}]);

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/counts') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(counts));
    return;
  }
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk) => (body += chunk));
  req.on('end', async () => {
    const request = JSON.parse(body);
    const reps = request.variables?.representations ?? [];
    counts.requests++;
    counts.representations += reps.length;
    counts.keys.push(...reps.map((r) => r.id));
    const result = await graphql({ schema, source: request.query, variableValues: request.variables ?? {} });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(result));
  });
});
server.listen(Number(port), '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
process.on('SIGTERM', () => process.exit(0));
