#!/usr/bin/env node
/**
 * The fan-out package's benches measured in one process (the hub on the in-process bus, the compiler,
 * the projector, uWS's compressors): each a `MicroBench` (scenario.ts) registered below by name.
 *   node bench/fanout/dist/micro.js NAME [options]      one of them; --help lists every one's options
 */
import { conflationOverhead } from './conflation-overhead.js';
import { engineMetricsOverhead } from './engine-metrics-overhead.js';
import { filterPredicate } from './filter-predicate.js';
import { projectorCost } from './projector-cost.js';
import { projectorEngine } from './projector-engine.js';
import { createOptionValues, helpLines, parseDeclared, type MicroBench } from './scenario.js';
import { tracingAlloc } from './tracing-alloc.js';
import { unicastCompile } from './unicast-compile.js';
import { unicastEarlyDrop } from './unicast-early-drop.js';
import { unicastPath } from './unicast-path.js';
import { unicastMemory } from './unicast-memory.js';
import { uwsCompressors } from './uws-compressors.js';

/** Every bench, by the name it is run with, in the order --help lists them. */
const MICRO_BENCHES: Readonly<Record<string, MicroBench>> = {
  'engine-metrics-overhead': engineMetricsOverhead,
  'conflation-overhead': conflationOverhead,
  'projector-engine': projectorEngine,
  'projector-cost': projectorCost,
  'filter-predicate': filterPredicate,
  'unicast-early-drop': unicastEarlyDrop,
  'unicast-path': unicastPath,
  'unicast-compile': unicastCompile,
  'unicast-memory': unicastMemory,
  'tracing-alloc': tracingAlloc,
  'uws-compressors': uwsCompressors,
};

function helpText(names: readonly string[]): string {
  const lines = ['in-process benches of the fan-out package, one per call', 'usage: node [NODE FLAGS] bench/fanout/dist/micro.js NAME [options]', ''];
  for (const name of names) {
    const { nodeFlags, description, options } = MICRO_BENCHES[name] as MicroBench;
    lines.push(`  ${name}${nodeFlags === undefined ? '' : ` (node ${nodeFlags})`}`, `      ${description}`, ...helpLines(options, '      '));
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const [name = '--help', ...args] = process.argv.slice(2);
  const bench = Object.hasOwn(MICRO_BENCHES, name) ? MICRO_BENCHES[name] : undefined;
  if (bench === undefined) {
    if (name === '--help' || name === '-h') return console.log(helpText(Object.keys(MICRO_BENCHES)));
    throw new RangeError(`unknown bench "${name}": use ${Object.keys(MICRO_BENCHES).join(', ')} (--help lists their options)`);
  }
  const specs = { ...bench.options, help: { help: 'this text' } };
  const { values, positionals } = parseDeclared(specs, args);
  if (values['help'] === true) return console.log(helpText([name]));
  if (positionals.length > 0) throw new RangeError(`unexpected argument "${positionals.join(' ')}": options are --name VALUE`);
  console.log(await bench.run(createOptionValues(specs, values, false)));
}

// The hubs keep timers (conflation polls among them): the process ends here, not when the loop drains.
main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
