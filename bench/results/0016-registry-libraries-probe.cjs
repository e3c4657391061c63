const { performance } = require('node:perf_hooks');
let t0 = performance.now();
const cf = require('./cf/node_modules/@confluentinc/schemaregistry');
const cfLoad = performance.now() - t0;
t0 = performance.now();
const kj = require('./kj/node_modules/@kafkajs/confluent-schema-registry');
const kjLoad = performance.now() - t0;
const avsc = require('./kj/node_modules/avsc');
const schema = { type: 'record', name: 'BidPlaced', namespace: 'demo', fields: [
  { name: 'listingId', type: 'string' }, { name: 'bidId', type: 'string' }, { name: 'bidderId', type: 'string' },
  { name: 'amountCents', type: 'long' }, { name: 'currency', type: 'string' },
  { name: 'placedAt', type: { type: 'long', logicalType: 'timestamp-millis' } },
  { name: 'note', type: ['null', 'string'], default: null } ] };
(async () => {
  const client = new cf.MockClient();
  const ser = new cf.AvroSerializer(client, cf.SerdeType.VALUE, { autoRegisterSchemas: true, useLatestVersion: false });
  const deser = new cf.AvroDeserializer(client, cf.SerdeType.VALUE, {});
  const id = await client.register('bids-value', { schemaType: 'AVRO', schema: JSON.stringify(schema) });
  const ser2 = new cf.AvroSerializer(client, cf.SerdeType.VALUE, { useLatestVersion: true });
  const msgs = [];
  for (let i = 0; i < 1000; i++) msgs.push(await ser2.serialize('bids', { listingId: 'l' + i, bidId: 'b' + i, bidderId: 'u' + (i % 50), amountCents: 1000 + i, currency: 'EUR', placedAt: 1700000000000 + i, note: i % 3 ? null : 'hi' }));
  console.log('id', id, 'bytes', msgs[0].length, msgs[0].subarray(0, 6));
  const N = 100;
  // Confluent deserializer
  await deser.deserialize('bids', msgs[0]);
  t0 = performance.now();
  for (let r = 0; r < N; r++) for (const m of msgs) await deser.deserialize('bids', m);
  const cfUs = (performance.now() - t0) * 1000 / (N * msgs.length);
  // kafkajs: prefill its cache (internal) since no server
  const reg = new kj.SchemaRegistry({ host: 'http://127.0.0.1:1' });
  reg.cache.setSchema(id, kj.SchemaType.AVRO, avsc.Type.forSchema(schema));
  await reg.decode(msgs[0]);
  t0 = performance.now();
  for (let r = 0; r < N; r++) for (const m of msgs) await reg.decode(m);
  const kjUs = (performance.now() - t0) * 1000 / (N * msgs.length);
  // raw avsc, sync
  const type = avsc.Type.forSchema(schema);
  t0 = performance.now();
  let x = 0;
  for (let r = 0; r < N; r++) for (const m of msgs) { const v = type.fromBuffer(m.subarray(5)); x += v.currency.length; }
  const rawUs = (performance.now() - t0) * 1000 / (N * msgs.length);
  // JSON baseline: JSON.parse of the same object
  const js = msgs.map((m) => Buffer.from(JSON.stringify(type.fromBuffer(m.subarray(5)))));
  t0 = performance.now();
  for (let r = 0; r < N; r++) for (const m of js) { const v = JSON.parse(m.toString()); x += v.currency.length; }
  const jsonUs = (performance.now() - t0) * 1000 / (N * msgs.length);
  console.log(JSON.stringify({ cfLoadMs: cfLoad.toFixed(0), kjLoadMs: kjLoad.toFixed(0), cfDeserUs: cfUs.toFixed(2), kjDecodeUs: kjUs.toFixed(2), avscFromBufferUs: rawUs.toFixed(2), jsonParseUs: jsonUs.toFixed(2) }));
})();
