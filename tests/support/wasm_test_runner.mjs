#!/usr/bin/env node
// Cargo runner for the wasm browser tests (src/tests/, the browser crate's):
//   node tests/support/wasm_test_runner.mjs TEST.wasm [ARGS...]
//
// wasm-bindgen-test-runner builds the test page and serves it; this script
// then drives the page in headless Chromium through playwright-core, exactly
// as the other browser tests do. The runner's own headless mode (through
// chromedriver) left about every second run on this machine at "Loading Wasm
// module..." until its timeout, while the same page under playwright has never
// hung; here the page and every worker print to our stderr on failure, so a
// hang is diagnosable instead of silent.
//
// Environment: WASM_BINDGEN_TEST_TIMEOUT (seconds, default 300), CHROMIUM
// (default /usr/bin/chromium), WASM_BINDGEN_TEST_RUNNER (default
// wasm-bindgen-test-runner on PATH).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/**
 * A pass-through proxy in front of the runner's server: one fresh upstream
 * connection per request, closed after it. Chromium keeps its connections
 * alive; with those parked on the runner's small server, a module import of
 * the test page could wait forever (the hang described above).
 */
function proxy(upstream) {
  const target = new URL(upstream);
  const server = http.createServer((req, res) => {
    const up = http.request({
      host: target.hostname, port: target.port, method: req.method, path: req.url,
      headers: { ...req.headers, host: target.host, connection: 'close' }, agent: false,
    }, (r) => {
      const headers = { ...r.headers };
      delete headers.connection;
      res.writeHead(r.statusCode, headers);
      r.pipe(res);
    });
    up.on('error', (e) => { res.writeHead(502); res.end(String(e)); });
    req.pipe(up);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => {
    resolve({ url: `http://127.0.0.1:${server.address().port}/`, close: () => server.close() });
  }));
}

/** Starts wasm-bindgen-test-runner in serve-only mode; resolves with its URL. */
function serve(wasm, args, port) {
  const bin = process.env.WASM_BINDGEN_TEST_RUNNER || 'wasm-bindgen-test-runner';
  const child = spawn(bin, [wasm, ...args], {
    env: { ...process.env, NO_HEADLESS: '1', WASM_BINDGEN_TEST_ADDRESS: `127.0.0.1:${port}` },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let seen = '';
  const ready = new Promise((resolve, reject) => {
    const onData = (chunk) => {
      seen += chunk;
      const m = seen.match(/available at (http:\/\/\S+)/);
      if (m) resolve(m[1]);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => reject(new Error(`wasm-bindgen-test-runner exited (${code}) before serving:\n${seen}`)));
    child.on('error', reject);
  });
  return { child, ready };
}

async function main() {
  const [wasm, ...args] = process.argv.slice(2);
  if (!wasm) {
    console.error('usage: wasm_test_runner.mjs TEST.wasm [ARGS...]');
    return 2;
  }
  const timeoutMs = Number(process.env.WASM_BINDGEN_TEST_TIMEOUT || 300) * 1000;
  const server = serve(wasm, args, await freePort());
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'gitsense-wasm-test-'));
  const log = [];
  const t0 = Date.now();
  const note = (line) => log.push(`[${((Date.now() - t0) / 1000).toFixed(1)} s] ${line}`);
  let context;
  let front;
  try {
    front = await proxy(await server.ready);
    const url = front.url;
    context = await chromium.launchPersistentContext(profile, {
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      headless: true,
      args: ARGS,
    });
    const page = context.pages()[0] || await context.newPage();
    page.on('console', (m) => note(`console.${m.type()}: ${m.text()}`));
    page.on('pageerror', (e) => note(`page error: ${e.message}`));
    page.on('requestfailed', (r) => note(`request failed: ${r.url()} ${r.failure()?.errorText}`));
    page.on('worker', (w) => {
      note(`worker started: ${w.url().slice(0, 120)}`);
      w.on('close', () => note('worker closed'));
      w.on('console', (m) => note(`worker console.${m.type()}: ${m.text()}`));
    });
    page.on('response', (r) => note(`${r.status()} ${r.url().slice(0, 120)}`));
    page.on('crash', () => note('page crashed'));
    await page.goto(url);
    let printed = 0;
    let text = '';
    while (Date.now() - t0 < timeoutMs) {
      text = await page.evaluate(() => document.getElementById('output')?.textContent ?? '');
      // The harness replaces "Loading..." by the run's output: print what is
      // new, and everything again if the text was replaced.
      if (text.length < printed) printed = 0;
      if (text.length > printed) {
        process.stdout.write(text.slice(printed));
        printed = text.length;
      }
      if (text.includes('test result: ')) break;
      // The harness prints this when the test worker fails to start (a
      // module that does not instantiate): no test will run.
      if (/\nWorker error: /.test(text)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    if (text.includes('test result: ok')) return 0;
    if (!text.includes('test result: ')) {
      console.error(`\nno test result after ${timeoutMs / 1000} s (WASM_BINDGEN_TEST_TIMEOUT)`);
    }
    console.error('\npage and worker log:');
    for (const line of log) console.error(`  ${line}`);
    return 1;
  } finally {
    if (context) await context.close().catch(() => {});
    if (front) front.close();
    server.child.kill('SIGKILL');
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

main().then((code) => process.exit(code), (e) => {
  console.error(`wasm test runner: ${e.stack || e}`);
  process.exit(1);
});
