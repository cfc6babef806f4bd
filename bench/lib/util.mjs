// Small helpers shared by the benchmark modules: statistics, compressed
// sizes, the machine description, running commands.

import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export const log = (...a) => console.error('\x1b[1m==>\x1b[0m', ...a);

/** Median of numbers (null for none). */
export function median(xs) {
  const s = xs.filter((x) => typeof x === 'number').sort((a, b) => a - b);
  if (!s.length) return null;
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** Nearest-rank percentile (p in 0..100; null for none). */
export function percentile(xs, p) {
  const s = xs.filter((x) => typeof x === 'number').sort((a, b) => a - b);
  if (!s.length) return null;
  return s[Math.min(s.length, Math.max(1, Math.ceil((s.length * p) / 100))) - 1];
}

export const round = (v, digits = 2) => (typeof v === 'number' ? Number(v.toFixed(digits)) : v);

/** Files above this are compressed with brotli quality 5, not 11 (q11 takes minutes per 100 MB). */
export const BROTLI_MAX_Q11 = 64 << 20;

/**
 * Raw, gzip (-9) and brotli sizes of a set of files, as one would serve
 * them. Files that are already gzip (Pagefind's `.pf_*` and `.pagefind`
 * files, a gzip index of ours) count their own size as gzip and their
 * decompressed size as raw.
 */
export function sizes(files) {
  const total = { files: files.length, raw: 0, gzip: 0, brotli: 0, brotliQuality: 11 };
  for (const f of files) {
    const s = fileSizes(fs.readFileSync(f));
    total.raw += s.raw;
    total.gzip += s.gzip;
    total.brotli += s.brotli;
    total.brotliQuality = Math.min(total.brotliQuality, s.brotliQuality);
  }
  return total;
}

const sizeCache = new Map(); // sha256 of the file → its sizes (big indexes are measured twice otherwise)

function fileSizes(data) {
  const key = crypto.createHash('sha256').update(data).digest('hex');
  if (sizeCache.has(key)) return sizeCache.get(key);
  const gzipped = data[0] === 0x1f && data[1] === 0x8b;
  const plain = gzipped ? zlib.gunzipSync(data) : data;
  const brotliQuality = plain.length > BROTLI_MAX_Q11 ? 5 : 11;
  const s = {
    raw: plain.length,
    gzip: gzipped ? data.length : zlib.gzipSync(plain, { level: 9 }).length,
    brotli: zlib.brotliCompressSync(plain, {
      params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: brotliQuality,
        [zlib.constants.BROTLI_PARAM_LGWIN]: 24,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: plain.length,
      },
    }).length,
    brotliQuality,
  };
  sizeCache.set(key, s);
  return s;
}

/**
 * A content-addressed file name, `index-<16 hex>.<ext>`, as a build names
 * what may be cached for good (the test server marks such files immutable).
 */
export function hashedName(data, ext) {
  return `index-${crypto.createHash('sha256').update(data).digest('hex').slice(0, 16)}.${ext}`;
}

/** An empty directory (what was there is removed). */
export function freshDir(dir) {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** Every file under `dir` (recursive), sorted. */
export function walk(dir) {
  const out = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...walk(p));
    else out.push(p);
  }
  return out.sort();
}

/** Runs a command; returns stdout (throws with stderr on failure). */
export function run(cmd, args, opts = {}) {
  return execFileSync(cmd, args, { encoding: 'utf8', maxBuffer: 256 << 20, stdio: ['ignore', 'pipe', 'pipe'], ...opts });
}

/**
 * Runs a command under `/usr/bin/time -v`: returns { stdout, stderr,
 * wallSeconds, userSeconds, peakRssKiB }.
 */
export function timed(cmd, args, opts = {}) {
  const r = spawnSync('/usr/bin/time', ['-v', cmd, ...args], { encoding: 'utf8', maxBuffer: 256 << 20, ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}):\n${r.stderr}`);
  const grab = (label) => {
    const m = new RegExp(`${label.replace(/[()]/g, '\\$&')}:\\s*(.+)`).exec(r.stderr);
    if (!m) throw new Error(`/usr/bin/time -v printed no "${label}"`);
    return m[1].trim();
  };
  const wall = grab('Elapsed (wall clock) time (h:mm:ss or m:ss)')
    .split(':')
    .reverse()
    .reduce((s, p, i) => s + Number(p) * 60 ** i, 0);
  return {
    stdout: r.stdout,
    stderr: r.stderr,
    wallSeconds: round(wall, 2),
    userSeconds: Number(grab('User time (seconds)')),
    peakRssKiB: Number(grab('Maximum resident set size (kbytes)')),
  };
}

/** The version of an installed npm package (node_modules). */
export function packageVersion(name) {
  return JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')).version;
}

/** Where and with what the benchmark ran. */
export function machine() {
  const cpus = os.cpus();
  return {
    cpu: cpus[0].model.trim(),
    cores: cpus.length,
    memGiB: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()}`,
  };
}

export const kib = (n) => (typeof n === 'number' ? `${(n / 1024).toFixed(n < 10240 ? 1 : 0)} KiB` : '–');
export const mib = (n) => (typeof n === 'number' ? `${(n / 2 ** 20).toFixed(1)} MiB` : '–');
export const bytes = (n) => (typeof n !== 'number' ? '–' : n >= 2 ** 20 ? mib(n) : kib(n));
export const msText = (n) => (typeof n !== 'number' ? '–' : n < 10 ? `${n.toFixed(2)} ms` : n < 1000 ? `${n.toFixed(0)} ms` : `${(n / 1000).toFixed(2)} s`);
