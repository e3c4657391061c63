#!/usr/bin/env node
// Makes uWebSockets.js load as the native addon for this Node ABI on this host, or says why it cannot
// (decision 0034). Run by scripts/bootstrap.sh after `pnpm install`; idempotent.
//
// Upstream builds its Linux binaries on Ubuntu 24.04 (glibc 2.39). The only symbols the Node 24 binary
// needs from glibc > 2.36 are three C23 aliases, `__isoc23_strtol`, `__isoc23_strtoul` and
// `__isoc23_sscanf` (GLIBC_2.38): glibc 2.38 redirects strtol/strtoul/sscanf to them when a program is
// compiled as C23/C++ with _GNU_SOURCE; they differ from the classic functions only by accepting "0b"
// binary prefixes, which uWS never parses. On a host with glibc < 2.38 (Debian 12: 2.36) this script:
//   1. builds a tiny shared library next to the binary that defines the three names by forwarding to
//      strtol, strtoul and vsscanf (gcc);
//   2. on a copy of the binary: drops the version tag of those three symbols, adds the library as
//      NEEDED with RUNPATH $ORIGIN (Debian's patchelf), and marks the GLIBC_2.38 requirement weak, so
//      the loader no longer refuses the file for it (a weak version that is missing is not fatal);
//   3. renames the copy over the original: pnpm hard-links package files from its store, and a rename
//      leaves the store's file untouched.
// Any other symbol newer than the host's glibc stops the set-up with the symbol's name: then the host is
// too old for this binary, and no shim is made up for it. On glibc >= 2.38 (Debian 13, the images)
// nothing is changed. Either way it ends by loading the module and checking that it is the native addon.
//   node scripts/uws-native.mjs [APP_DIR]   patch when needed, then check (prints one line); APP_DIR
//                                           defaults to apps/gateway (tests/infra passes an image's tree)
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SHIM_LIBRARY = 'libwirestream-isoc23.so';
const SHIMMED_VERSION = 'GLIBC_2.38';
const SHIMMED_SYMBOLS = ['__isoc23_strtol', '__isoc23_strtoul', '__isoc23_sscanf'];
const SHIM_SOURCE = `/* Written by wirestream scripts/uws-native.mjs (decision 0034): the C23 aliases of glibc 2.38,
 * forwarded to the classic functions for hosts with an older glibc. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
long __isoc23_strtol(const char *s, char **end, int base) { return strtol(s, end, base); }
unsigned long __isoc23_strtoul(const char *s, char **end, int base) { return strtoul(s, end, base); }
int __isoc23_sscanf(const char *s, const char *format, ...) {
  va_list args;
  va_start(args, format);
  int n = vsscanf(s, format, args);
  va_end(args);
  return n;
}
`;
const VER_FLG_WEAK = 0x2;

const appDir = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'apps/gateway');
const requireFromGateway = createRequire(join(appDir, 'package.json'));

function fail(message) {
  process.stderr.write(`uWebSockets.js: ${message}\n`);
  process.exit(1);
}

/** Versions a shared object needs (verneed) with their flags, and the dynamic symbols bound to each. */
function readVersionNeeds(bytes) {
  if (bytes.readUInt32BE(0) !== 0x7f454c46 || bytes[4] !== 2 || bytes[5] !== 1) throw new Error('not a 64-bit little-endian ELF file');
  const shoff = Number(bytes.readBigUInt64LE(0x28));
  const shentsize = bytes.readUInt16LE(0x3a);
  const shnum = bytes.readUInt16LE(0x3c);
  const sections = Array.from({ length: shnum }, (_, i) => {
    const at = shoff + i * shentsize;
    return { type: bytes.readUInt32LE(at + 4), offset: Number(bytes.readBigUInt64LE(at + 24)), size: Number(bytes.readBigUInt64LE(at + 32)), link: bytes.readUInt32LE(at + 40) };
  });
  const ofType = (type) => sections.find((s) => s.type === type);
  const verneed = ofType(0x6ffffffe);
  const versym = ofType(0x6fffffff);
  const dynsym = ofType(11);
  if (!verneed || !versym || !dynsym) return [];
  const string = (table, at) => {
    const start = sections[table].offset + at;
    return bytes.toString('latin1', start, bytes.indexOf(0, start));
  };
  const needs = [];
  for (let vn = verneed.offset; ; ) {
    const file = string(verneed.link, bytes.readUInt32LE(vn + 4));
    for (let aux = vn + bytes.readUInt32LE(vn + 8), left = bytes.readUInt16LE(vn + 2); left > 0; left--) {
      needs.push({ file, name: string(verneed.link, bytes.readUInt32LE(aux + 8)), index: bytes.readUInt16LE(aux + 6), flags: bytes.readUInt16LE(aux + 4), flagsAt: aux + 4, symbols: [] });
      const next = bytes.readUInt32LE(aux + 12);
      if (next === 0) break;
      aux += next;
    }
    const next = bytes.readUInt32LE(vn + 12);
    if (next === 0) break;
    vn += next;
  }
  for (let i = 0; i < dynsym.size / 24; i++) {
    const index = bytes.readUInt16LE(versym.offset + i * 2) & 0x7fff;
    const need = needs.find((n) => n.index === index);
    if (need) need.symbols.push(string(dynsym.link, bytes.readUInt32LE(dynsym.offset + i * 24)));
  }
  return needs;
}

/** `2.36` < `2.38`: glibc version names compared numerically. */
function newerThan(version, host) {
  const [a, b] = [version, host].map((v) => v.split('.').map(Number));
  for (let i = 0; i < Math.max(a.length, b.length); i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  return false;
}

function tool(name, debianPackage) {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' });
  } catch {
    fail(`this host's glibc needs the three-symbol shim (decision 0034), which needs ${name}: apt-get install ${debianPackage}`);
  }
}

function shim(dir, file, needs) {
  tool('gcc', 'gcc');
  tool('patchelf', 'patchelf');
  const work = mkdtempSync(join(dir, '.shim-'));
  try {
    writeFileSync(join(work, 'isoc23.c'), SHIM_SOURCE);
    execFileSync('gcc', ['-O2', '-shared', '-fPIC', '-o', join(work, SHIM_LIBRARY), join(work, 'isoc23.c')]);
    renameSync(join(work, SHIM_LIBRARY), join(dir, SHIM_LIBRARY));
    const copy = join(work, 'addon.node');
    copyFileSync(join(dir, file), copy);
    // One change per patchelf call: 0.14 mixes up --add-needed and --set-rpath given together.
    execFileSync('patchelf', [...SHIMMED_SYMBOLS.flatMap((s) => ['--clear-symbol-version', s]), copy]);
    execFileSync('patchelf', ['--add-needed', SHIM_LIBRARY, copy]);
    execFileSync('patchelf', ['--set-rpath', '$ORIGIN', copy]);
    const bytes = readFileSync(copy);
    for (const need of readVersionNeeds(bytes)) if (needs.some((n) => n.name === need.name)) bytes.writeUInt16LE(need.flags | VER_FLG_WEAK, need.flagsAt);
    writeFileSync(copy, bytes);
    renameSync(copy, join(dir, file));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

const entry = requireFromGateway.resolve('uWebSockets.js');
const dir = dirname(entry);
const version = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version;
const file = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
if (!existsSync(join(dir, file))) fail(`${version} has no binary for Node ${process.version} on ${process.platform}-${process.arch} (${file}): run Node 24 (scripts/bootstrap.sh)`);
const glibc = process.report.getReport().header.glibcVersionRuntime;
let how = 'unmodified';
if (process.platform === 'linux' && glibc !== undefined) {
  const needs = readVersionNeeds(readFileSync(join(dir, file)));
  const tooNew = needs.filter((n) => n.name.startsWith('GLIBC_') && (n.flags & VER_FLG_WEAK) === 0 && newerThan(n.name.slice('GLIBC_'.length), glibc));
  const unshimmable = tooNew.filter((n) => n.name !== SHIMMED_VERSION || n.symbols.some((s) => !SHIMMED_SYMBOLS.includes(s)));
  if (unshimmable.length > 0) {
    fail(`${file} needs ${unshimmable.map((n) => `${n.name} (${n.symbols.join(', ')})`).join('; ')} but this host has glibc ${glibc}: run on Debian 13 or newer (glibc >= 2.38)`);
  }
  if (tooNew.length > 0) shim(dir, file, tooNew);
  if (needs.some((n) => (n.flags & VER_FLG_WEAK) !== 0) || tooNew.length > 0) how = `shimmed for glibc ${glibc}: ${SHIMMED_SYMBOLS.join(', ')} from ${SHIM_LIBRARY}`;
}
const uws = requireFromGateway('uWebSockets.js');
const loaded = Object.keys(requireFromGateway.cache).find((k) => k.endsWith(file));
if (loaded === undefined || !Function.prototype.toString.call(uws.App).includes('[native code]')) fail(`${version} did not load its native addon ${file}`);
process.stdout.write(`uWebSockets.js ${version}: native addon ${file} (${how})\n`);
