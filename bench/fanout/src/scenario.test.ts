import { describe, expect, it } from 'vitest';
import { createOptionValues, helpLines, type CommonOptions, type OptionSpecs } from './scenario.js';
import { SCENARIOS } from './scenarios.js';

const specs: OptionSpecs = {
  sockets: { arg: 'N', default: '4000', quick: '500', help: 'sockets' },
  counts: { arg: 'LIST', default: '1,100', help: 'counts' },
  addresses: { arg: 'A', help: 'addresses (default: worked out)' },
  baselines: { help: 'also the baselines' },
};

const common: CommonOptions = {
  quick: false,
  stacks: ['naive', 'card', 'ours', 'bare', 'bare-corked'],
  repeat: 1,
  workers: undefined,
  drainOverrideMs: undefined,
  idleMs: 2_000,
  baseGateway: undefined,
  filterKeys: ['lst-000000'],
};

describe('option values', () => {
  it('gives the value on the command line, else the default, else --quick’s default under --quick', () => {
    expect(createOptionValues(specs, {}, false).number('sockets')).toBe(4_000);
    expect(createOptionValues(specs, {}, true).number('sockets')).toBe(500);
    expect(createOptionValues(specs, { sockets: '250' }, true).number('sockets')).toBe(250);
    expect(createOptionValues(specs, {}, true).numbers('counts')).toEqual([1, 100]);
    expect(createOptionValues(specs, {}, false).string('addresses')).toBeUndefined();
    expect(createOptionValues(specs, { baselines: true }, false).flag('baselines')).toBe(true);
    expect(createOptionValues(specs, {}, false).given('sockets')).toBe(false);
  });

  it('refuses a value that is not a number ≥ 0, naming the option and the value', () => {
    expect(() => createOptionValues(specs, { sockets: 'many' }, false).number('sockets')).toThrow('--sockets: expected a number ≥ 0, got "many"');
    expect(() => createOptionValues(specs, { counts: '1,-2' }, false).numbers('counts')).toThrow('--counts: expected a number ≥ 0, got "-2"');
    expect(() => createOptionValues(specs, {}, false).required('addresses')).toThrow('--addresses is required here');
    expect(() => createOptionValues(specs, { sockets: '2.5' }, false).positiveInt('sockets')).toThrow('--sockets must be a positive integer, got 2.5');
  });

  it('refuses to read an option nobody declared', () => {
    expect(() => createOptionValues(specs, {}, false).string('socket')).toThrow('no option --socket is declared');
  });

  it('prints each option with its placeholder and both defaults', () => {
    expect(helpLines(specs, '  ')[0]).toMatch(/^ {2}--sockets N +sockets \(default 4000; --quick 500\)$/);
    expect(helpLines(specs, '  ')[3]).toMatch(/^ {2}--baselines +also the baselines$/);
  });
});

describe('the registry', () => {
  const all: OptionSpecs = Object.assign({}, ...SCENARIOS.map((s) => s.options)) as OptionSpecs;

  it('has unique scenario and option names', () => {
    expect(new Set(SCENARIOS.map((s) => s.name)).size).toBe(SCENARIOS.length);
    const names = SCENARIOS.flatMap((s) => Object.keys(s.options));
    expect(new Set(names).size).toBe(names.length);
  });

  it.each([false, true])('prepares every scenario from its defaults alone (quick: %s), reading only declared options', (quick) => {
    const options = createOptionValues(all, {}, quick);
    for (const scenario of SCENARIOS) {
      const prepared = scenario.prepare(options, { ...common, quick });
      expect(prepared.events, scenario.name).toBeGreaterThanOrEqual(0);
    }
  });

  it('fails fast on contradictory options, before anything runs', () => {
    const sweep = SCENARIOS.find((s) => s.name === 'sweep');
    expect(() => sweep?.prepare(createOptionValues(all, { 'sweep-distinct': '10,100' }, false), common)).toThrow('--sweep-distinct must include 1');
    const saturation = SCENARIOS.find((s) => s.name === 'saturation');
    expect(() => saturation?.prepare(createOptionValues(all, { 'conflating-share': '2' }, false), common)).toThrow('--conflating-share: expected 0..1');
    const bandwidth = SCENARIOS.find((s) => s.name === 'bandwidth');
    expect(() => bandwidth?.prepare(createOptionValues(all, { 'bandwidth-configs': 'plain,gzip' }, false), common)).toThrow('--bandwidth-configs: unknown "gzip"');
    const guard = SCENARIOS.find((s) => s.name === 'guard');
    expect(() => guard?.prepare(createOptionValues(all, { 'guard-sockets': '50' }, false), common)).toThrow('--guard-sockets must be an integer ≥ 100, got 50');
  });
});
