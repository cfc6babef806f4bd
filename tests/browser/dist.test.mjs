// The release as a new user gets it (./build.sh dist): in an empty
// directory, with no checkout and no Rust on PATH, `npm install` of the
// tarball, `npx gitsense-search --version`, `npx gitsense-search site` on
// a small site, and the two lines it prints give a page that finds
// results in Chromium, served by a plain static server. The standalone
// archive's indexer finds the module beside it.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setup, closePage, ROOT } from './harness.mjs';
import { startServer } from '../../www/serve.mjs';

const DIST = path.join(ROOT, 'dist');
const version = fs.readFileSync(path.join(ROOT, 'Cargo.toml'), 'utf8').match(/^version = "(.*)"/m)[1];
const TARBALL = path.join(DIST, `gitsense-search-${version}.tgz`);
const platform = `${process.platform}-${process.arch}`;
const ARCHIVE = path.join(DIST, `gitsense-search-${version}-${platform}.tar.gz`);
if (!fs.existsSync(TARBALL)) throw new Error(`${TARBALL} is missing: run ./build.sh dist first`);

// Node and the system's tools only: no cargo, no rustc, no checkout.
const PATH = [path.dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].filter((d) => !fs.existsSync(path.join(d, 'cargo'))).join(':');
const env = { ...process.env, PATH, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
delete env.GITSENSE_SEARCH_PKG;
delete env.CARGO;
const run = (cwd, cmd, args) => execFileSync(cmd, args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

const page = (title, body) =>
  `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${title} - Field Guide</title></head><body><main>${body}</main></body></html>`;

let site;
let work;
before(async () => {
  site = await setup();
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'gitsense-dist-'));
});
after(async () => {
  await site.close();
  fs.rmSync(work, { recursive: true, force: true });
});

test('no cargo is on the PATH the installs run with', () => {
  assert.throws(() => run(work, 'sh', ['-c', 'command -v cargo']));
});

test('npm install of the tarball gives npx gitsense-search, and its site command gives a page that searches', async () => {
  const app = path.join(work, 'app');
  fs.mkdirSync(app);
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'field-guide', private: true }));
  run(app, 'npm', ['install', '--offline', '--no-audit', '--no-fund', TARBALL]);
  assert.equal(run(app, 'npx', ['--no-install', 'gitsense-search', '--version']).trim(), `gitsense-search ${version}`);

  const docs = path.join(app, 'public');
  fs.mkdirSync(docs);
  fs.writeFileSync(path.join(docs, 'herons.html'), page('Herons', '<h1 id="herons">Herons</h1><p>Herons wade in shallow water and strike at fish.</p><h2 id="nesting">Nesting</h2><p>Herons nest in colonies called heronries.</p>'));
  fs.writeFileSync(path.join(docs, 'owls.html'), page('Owls', '<h1 id="owls">Owls</h1><p>Owls hunt at night; their feathers make no sound.</p>'));
  const lines = run(app, 'npx', ['--no-install', 'gitsense-search', 'site', 'public', '--quiet']);
  assert.equal(lines.trim().split('\n').length, 2, lines);
  assert.ok(fs.existsSync(path.join(docs, '_gitsense/pkg/ui.js')), 'the module is copied from the package');
  fs.writeFileSync(path.join(docs, 'index.html'), page('Home', `<h1>Field guide</h1>\n${lines}`));

  const server = await startServer({ root: docs, port: 0 });
  const p = await site.page(null);
  try {
    await p.goto(server.url + 'index.html');
    await p.waitForFunction(() => customElements.get('gitsense-search'));
    await p.keyboard.press('Control+k');
    await p.keyboard.type('heronries');
    await p.waitForFunction(() => {
      const r = document.querySelector('gitsense-search').shadowRoot;
      return r.querySelector('.rows').getAttribute('aria-busy') === 'false' && /result/i.test(r.querySelector('.status').textContent);
    }, null, { timeout: 60_000 });
    const hrefs = await p.evaluate(() => [...document.querySelector('gitsense-search').shadowRoot.querySelectorAll('.rows a')].map((a) => a.getAttribute('href')));
    assert.ok(hrefs.some((h) => h.includes('herons.html#nesting')), hrefs.join());
    assert.deepEqual(p.errors, []);
  } finally {
    await closePage(p);
    await server.close();
  }
});

test('the standalone archive indexes a site with the module beside the binary', () => {
  const dir = path.join(work, 'standalone');
  fs.mkdirSync(dir);
  run(dir, 'tar', ['-xzf', ARCHIVE]);
  const bin = path.join(dir, `gitsense-search-${version}-${platform}`, 'gitsense-search');
  const docs = path.join(dir, 'site');
  fs.mkdirSync(docs);
  fs.writeFileSync(path.join(docs, 'a.html'), page('Alpha', '<h1 id="a">Alpha</h1><p>alpha words</p>'));
  const lines = run(docs, bin, ['site', '.', '--quiet']);
  assert.match(lines, /<gitsense-search manifest=/);
  assert.ok(fs.existsSync(path.join(docs, '_gitsense/pkg/worker.js')));
});

test('on a platform the package has no indexer for, npx says so and fails', () => {
  const app = path.join(work, 'app');
  const launcher = path.join(app, 'node_modules/gitsense-search/bin/gitsense-search.js');
  const moved = path.join(app, 'node_modules/gitsense-search/bin', `${platform}.away`);
  fs.renameSync(path.join(path.dirname(launcher), platform), moved);
  try {
    assert.throws(() => run(app, process.execPath, [launcher, '--version']), (e) => e.status === 1 && /has no indexer for/.test(e.stderr));
  } finally {
    fs.renameSync(moved, path.join(path.dirname(launcher), platform));
  }
});
