// The decoders that need avsc or protobufjs, behind one dynamic import (load-codecs.ts): the package's
// index does not load them, so a gateway or ingest without a wire-format topic never does (decision 0031).
export { compileAvroDecoder } from './avro-json.js';
export { compileProtobufDecoder, loadProtobufFile } from './protobuf-json.js';
export { readProtobufShapes } from './protobuf-shape.js';
