#!/usr/bin/env node
// `npx gitsense-search ...`: runs the indexer binary shipped in this
// package for this platform (bin/PLATFORM-ARCH/gitsense-search), with
// the package itself as the browser module that `site` copies into a
// site (it holds index.js, worker.js, the wasm and ui.js). Node 20 or
// later and nothing else: no Rust, no build.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const platform = `${process.platform}-${process.arch}`;
const exe = path.join(here, platform, process.platform === 'win32' ? 'gitsense-search.exe' : 'gitsense-search');

if (!fs.existsSync(exe)) {
  const built = fs
    .readdirSync(here, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);
  console.error(
    `error: this gitsense-search package has no indexer for ${platform} (it has: ${built.join(', ') || 'none'}); ` +
      'build it from the repository with ./build.sh, or run this on one of those platforms',
  );
  process.exit(1);
}

const env = { ...process.env };
// The module `site` copies: this package, unless the caller names another.
if (!env.GITSENSE_SEARCH_PKG) env.GITSENSE_SEARCH_PKG = path.dirname(here);
const run = spawnSync(exe, process.argv.slice(2), { stdio: 'inherit', env });
if (run.error) {
  console.error(`error: could not run ${exe}: ${run.error.message}`);
  process.exit(1);
}
// A signal's death reads as a shell reports it (128 + its number).
process.exit(run.status ?? 128 + (os.constants.signals[run.signal] ?? 0));
