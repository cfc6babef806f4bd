// The AI-assisted search and the LLM-ready formats through the JS API in
// headless Chromium: engine.assistedSearch with a scripted model (a
// deterministic JS function standing in for the host's LLM) on the real
// sample index, compared with the native `gitsense-search assist` driven by
// the same model as a shell script (--llm-cmd); stage reports in order; the
// stage-1 retry; a failing, aborted or interrupted model; interleaving with
// other searches; formatResults / formatOutcome against the CLI's --format.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setup, publish, openEngine, closePage, CLI, SAMPLE_INDEX, HOSTILE_INDEX, ROOT } from './harness.mjs';

const QUESTION = 'Where are payments processed?';
const STAGE = (n) => `# GitSense assisted search, stage ${n}:`;

// The scripted model, twice: as a shell script for the CLI's --llm-cmd and
// as a JS function for the page. Both answer by the prompt's title: stage 1
// first writes an invalid query, then (seeing the error fed back) a valid
// one; stage 2 picks the 2nd-4th listed files plus one that does not exist;
// stage 4 names the first two files it was shown plus a made-up one.
// The script records every prompt it gets, byte for byte, in $PROMPTS.
const MODEL_SH = String.raw`#!/bin/sh
n=$(ls "$PROMPTS" | wc -l)
f="$PROMPTS/$(printf %02d "$n").txt"
cat > "$f"
prompt=$(cat "$f")
case "$prompt" in
  "# GitSense assisted search, stage 1:"*)
    case "$prompt" in
      *"Your previous query was"*) echo 'Query: ` + '`payment OR refund OR checkout`' + String.raw`' ;;
      *) echo 'payment "unclosed' ;;
    esac ;;
  "# GitSense assisted search, stage 2:"*)
    printf '%s\n' "$prompt" | grep -E '^[0-9]+ \| ' | sed -n '2,4p' |
      awk -F' [|] ' 'BEGIN{printf "["} {if (NR>1) printf ", "; printf "{\"path\": \"%s\", \"chat_id\": %s}", $2, $1} END{print ", {\"path\": \"no/such/file.js\", \"chat_id\": 99999}]"}' ;;
  "# GitSense assisted search, stage 4:"*)
    files=$(printf '%s\n' "$prompt" | grep -E '^## [0-9]+\. ' | sed -n '1,2p' |
      sed 's/^## [0-9]*\. \(.*\) (chat_id \([0-9]*\).*/{"path": "\1", "chat_id": \2}/' | paste -sd, -)
    printf '{"answer": "Payments are handled in the files below.", "identifiedFiles": [%s, {"path": "made/up.rs", "chat_id": 1}]}\n' "$files" ;;
  *) echo "unexpected prompt" >&2; exit 9 ;;
esac
`;

/** Installs window.scriptedModel(log, opts) in the page: the JS twin of MODEL_SH. */
function installModel(page) {
  return page.evaluate(() => {
    const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
    // log: every call as { stage, name, prompt }; opts.query: the valid
    // stage-1 query; opts.badFirst: start with an invalid one (default
    // true); opts.delay: ms before answering; opts.during(info): awaited
    // before answering (to run other requests while the model "thinks").
    window.scriptedModel = (log, opts = {}) => async (prompt, info) => {
      log.push({ stage: info.stage, name: info.name, prompt });
      if (opts.delay) await sleep(opts.delay);
      if (opts.during) await opts.during(info);
      if (prompt.startsWith('# GitSense assisted search, stage 1:')) {
        const retry = prompt.includes('Your previous query was');
        if (!retry && opts.badFirst !== false) return 'payment "unclosed';
        return `Query: \`${opts.query || 'payment OR refund OR checkout'}\``;
      }
      if (prompt.startsWith('# GitSense assisted search, stage 2:')) {
        const rows = prompt.split('\n').filter((l) => /^[0-9]+ \| /.test(l)).slice(1, 4);
        const files = rows.map((l) => {
          const [id, path] = l.split(' | ');
          return { path, chat_id: Number(id) };
        });
        files.push({ path: 'no/such/file.js', chat_id: 99999 });
        return JSON.stringify(files);
      }
      if (prompt.startsWith('# GitSense assisted search, stage 4:')) {
        const files = prompt
          .split('\n')
          .filter((l) => /^## [0-9]+\. /.test(l))
          .slice(0, 2)
          .map((l) => {
            const m = /^## [0-9]+\. (.*) \(chat_id ([0-9]+)/.exec(l);
            return { path: m[1], chat_id: Number(m[2]) };
          });
        files.push({ path: 'made/up.rs', chat_id: 1 });
        return JSON.stringify({ answer: 'Payments are handled in the files below.', identifiedFiles: files });
      }
      throw new Error('unexpected prompt');
    };
  });
}

let site;
let page;
let tmp;
let modelPath;

before(async () => {
  site = await setup();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gitsense-assist-'));
  modelPath = path.join(tmp, 'model.sh');
  fs.writeFileSync(modelPath, MODEL_SH);
  page = await site.blank();
  await openEngine(page);
  await installModel(page);
});

after(async () => {
  await closePage(page);
  await site.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** `gitsense-search assist` with the scripted model: { stdout, prompts }. */
function cliAssist(flags, format = 'json') {
  const prompts = fs.mkdtempSync(path.join(tmp, 'prompts-'));
  const stdout = execFileSync(
    CLI,
    ['assist', SAMPLE_INDEX, QUESTION, '--llm-cmd', `sh ${modelPath}`, '--format', format, '--quiet', ...flags],
    { encoding: 'utf8', env: { ...process.env, PROMPTS: prompts }, maxBuffer: 64 << 20 },
  );
  const files = fs.readdirSync(prompts).sort();
  return { stdout, prompts: files.map((f) => fs.readFileSync(path.join(prompts, f), 'utf8')) };
}

/**
 * engine.assistedSearch in the page with the scripted model. Returns
 * { outcome, prompts, events } or { error, events }; events interleaves the
 * model's calls and the stage reports in the order the page saw them.
 */
function assisted(p, question, options = {}, modelOpts = {}) {
  return p.evaluate(
    async ({ question, options, modelOpts }) => {
      const calls = [];
      const events = [];
      const model = window.scriptedModel(calls, modelOpts);
      const reports = [];
      try {
        const outcome = await window.engine.assistedSearch(question, {
          ...options,
          llm: (prompt, info) => {
            events.push(`llm ${info.stage} ${info.name}`);
            return model(prompt, info);
          },
          onStage: (r) => {
            reports.push(r);
            events.push(`report ${r.name} ${r.attempt}`);
          },
        });
        events.push('resolved');
        return { outcome, prompts: calls.map((c) => c.prompt), events, reports };
      } catch (e) {
        return { error: e.toJSON ? e.toJSON() : { message: String(e) }, events, reports };
      }
    },
    { question, options, modelOpts },
  );
}

const tokens = (s) => Math.ceil([...s].length / 4);

/** The outcome as JSON text without the timings (which differ run to run). */
function timeless(outcome) {
  const o = structuredClone(outcome);
  for (const s of o.stages) {
    assert.ok(Number.isFinite(s.elapsedMs) && s.elapsedMs >= 0, `elapsedMs of ${s.name}: ${s.elapsedMs}`);
    if (s.llmMs !== undefined) assert.ok(Number.isFinite(s.llmMs) && s.llmMs >= 0, `llmMs of ${s.name}`);
    delete s.elapsedMs;
    delete s.llmMs;
  }
  return JSON.stringify(o);
}

const running = () => page.evaluate(() => window.engine._assistRunningForTests());

// [CLI flags, the same as assistedSearch options]
const SCENARIOS = [
  [[], {}],
  [['--condense-threshold', '3', '--max-files', '4', '--max-tokens', '2500'], { condenseThreshold: 3, maxReviewFiles: 4, maxTokens: 2500 }],
  [['--max-tokens', '1200'], { maxTokens: 1200 }],
];

test('assistedSearch gives the native CLI outcome, from the same prompts, with the same scripted model', async () => {
  for (const [flags, options] of SCENARIOS) {
    const what = JSON.stringify(options);
    const native = cliAssist(flags);
    const expected = JSON.parse(native.stdout);
    const got = await assisted(page, QUESTION, options);
    assert.ok(got.outcome, `${what}: ${JSON.stringify(got.error)}`);
    // The model saw exactly the prompts the CLI's model saw...
    assert.equal(got.prompts.length, native.prompts.length, what);
    got.prompts.forEach((p, i) => assert.equal(p, native.prompts[i], `${what}: prompt ${i + 1}`));
    // ... and the outcome is the CLI's, field for field, timings aside (the
    // CLI prints it through formatOutcome's json, within --max-tokens).
    if (!options.maxTokens) assert.equal(timeless(got.outcome), timeless(expected), what);
    const printed = await page.evaluate(
      ({ outcome, maxTokens }) => window.engine.formatOutcome(outcome, 'json', { maxTokens }),
      { outcome: got.outcome, maxTokens: options.maxTokens },
    );
    assert.equal(timeless(JSON.parse(printed)), timeless(expected), what);
    assert.ok(got.outcome.identifiedFiles.length >= 1, what);
    assert.deepEqual(got.outcome.identifiedFiles, expected.identifiedFiles, what);
    assert.deepEqual(got.outcome.flagged, [{ mention: 'made/up.rs', reason: 'unknown-path' }], what);
    assert.equal(got.outcome.answer, 'Payments are handled in the files below.');
    // Every stage report reached onStage, in order, before the promise resolved.
    assert.deepEqual(got.reports, got.outcome.stages, what);
    if (options.condenseThreshold) assert.ok(got.prompts.some((p) => p.startsWith(STAGE(2))), `${what}: a condensed pick`);
    if (options.maxTokens === 1200) assert.match(got.prompts.at(-1), /more files were left out to fit the token budget/, what);
    if (options.maxTokens) {
      for (const p of got.prompts) assert.ok(tokens(p) <= options.maxTokens, `${what}: a prompt of ${tokens(p)} tokens`);
    }
  }
  assert.equal(await running(), 0);
});

test('stage reports arrive in order, each as its stage ends, between the model calls', async () => {
  const plain = await assisted(page, QUESTION);
  assert.deepEqual(plain.events, [
    'llm 1 query',
    'report query 1',
    'llm 1 query',
    'report query 2',
    'report tiny-overviews 1',
    'report overviews 1',
    'llm 4 review',
    'report review 1',
    'resolved',
  ]);
  const condensed = await assisted(page, QUESTION, { condenseThreshold: 3 });
  assert.deepEqual(condensed.events, [
    'llm 1 query',
    'report query 1',
    'llm 1 query',
    'report query 2',
    'report tiny-overviews 1',
    'llm 2 condensed-pick',
    'report condensed-pick 1',
    'report overviews 1',
    'llm 4 review',
    'report review 1',
    'resolved',
  ]);
  const [, , tiny, pick, overviews] = condensed.reports;
  assert.equal(tiny.counts.matches, condensed.outcome.totalMatches);
  assert.ok(tiny.counts.matches > 3);
  assert.match(tiny.notes[0], /exceed 3: the model picks from a condensed view/);
  assert.deepEqual([pick.counts.chosen, pick.counts.flagged], [3, 1]);
  assert.equal(overviews.counts.tinyFallback, 3, 'the sample has tiny overviews only');
  assert.ok(pick.promptTokens > 0 && pick.llmMs >= 0);
});

test('a rejected stage-1 query goes back to the model with its error, once', async () => {
  const r = await assisted(page, QUESTION);
  const [first, retry] = r.prompts;
  assert.ok(first.startsWith(STAGE(1)) && retry.startsWith(STAGE(1)));
  assert.ok(!first.includes('Your previous query was'));
  assert.ok(retry.includes('Your previous query was:\n\n    payment "unclosed\n'), retry);
  assert.ok(retry.includes('rejected it with error `query.unbalanced_quote`'), retry);
  // The caret points at the quote (character 8).
  assert.ok(retry.includes(`    payment "unclosed\n    ${' '.repeat(8)}^\n`), retry);
  const [a1, a2] = r.reports;
  assert.deepEqual([a1.name, a1.attempt, a1.query], ['query', 1, 'payment "unclosed']);
  assert.deepEqual(a1.error, { code: 'query.unbalanced_quote', message: 'the " quote opened here is never closed', position: 8 });
  assert.deepEqual([a2.attempt, a2.query, a2.error], [2, 'payment OR refund OR checkout', undefined]);
  assert.equal(r.outcome.query, 'payment OR refund OR checkout');

  // A model that never writes a valid query: the query error, after one retry.
  const bad = await page.evaluate(async () => {
    const reports = [];
    let calls = 0;
    try {
      await window.engine.assistedSearch('Where are payments processed?', {
        llm: () => {
          calls += 1;
          return 'payment "unclosed';
        },
        onStage: (rep) => reports.push(rep),
      });
      return { calls };
    } catch (e) {
      return { calls, error: e.toJSON(), reports };
    }
  });
  assert.equal(bad.calls, 2);
  assert.deepEqual(bad.error, { code: 'query.unbalanced_quote', message: 'the " quote opened here is never closed', position: 8 });
  assert.deepEqual(bad.reports.map((x) => [x.attempt, x.error.code]), [[1, 'query.unbalanced_quote'], [2, 'query.unbalanced_quote']]);
  assert.match(bad.reports[1].notes[0], /no retries left/);

  // retries: 0 asks once.
  const once = await page.evaluate(() =>
    window.engine
      .assistedSearch('Where are payments processed?', { retries: 0, llm: () => 'in:chats payment' })
      .then(() => null, (e) => e.toJSON()),
  );
  assert.equal(once.code, 'query.directive_not_allowed');
  assert.equal(once.position, 0);
  assert.equal(await running(), 0);
});

test('an llm callback that throws or rejects fails the search with assist.llm_failed naming the stage', async () => {
  const cases = await page.evaluate(async () => {
    const at = (stage, fail) => (prompt, info) => (info.stage === stage ? fail() : info.stage === 1 ? 'payment OR refund' : '[]');
    const variants = {
      'throws at stage 1': at(1, () => {
        throw new TypeError('model is not configured');
      }),
      'rejects at stage 4': at(4, () => Promise.reject(new Error('HTTP 503 from the model'))),
      'rejects with a string at stage 2': at(2, () => Promise.reject('rate limited')),
      'resolves to an object at stage 4': at(4, () => ({ text: 'an answer' })),
    };
    const out = {};
    for (const [what, llm] of Object.entries(variants)) {
      try {
        await window.engine.assistedSearch('Where are payments processed?', { llm, condenseThreshold: 3 });
        out[what] = 'resolved';
      } catch (e) {
        out[what] = { ...e.toJSON(), name: e.name, cause: e.cause === undefined ? null : String(e.cause), running: await window.engine._assistRunningForTests() };
      }
    }
    out.after = (await window.engine.search('payment')).totalResultsReturned;
    return out;
  });
  const expect = {
    'throws at stage 1': ['stage 1 (query)', 'TypeError: model is not configured', 'TypeError: model is not configured'],
    'rejects at stage 4': ['stage 4 (review)', 'Error: HTTP 503 from the model', 'Error: HTTP 503 from the model'],
    'rejects with a string at stage 2': ['stage 2 (condensed-pick)', 'rate limited', 'rate limited'],
    'resolves to an object at stage 4': ['stage 4 (review)', 'it must resolve to a string', null],
  };
  for (const [what, [location, detail, cause]] of Object.entries(expect)) {
    const e = cases[what];
    assert.equal(e.code, 'assist.llm_failed', what);
    assert.equal(e.name, 'GitSenseSearchError', what);
    assert.equal(e.location, location, what);
    assert.equal(e.position, null, what);
    assert.ok(e.message.startsWith(`the llm callback failed in ${location}: `), `${what}: ${e.message}`);
    assert.ok(e.message.includes(detail), `${what}: ${e.message}`);
    assert.equal(e.cause, cause, what);
    // The worker dropped the session.
    assert.equal(e.running, 0, what);
  }
  assert.ok(cases.after > 0, 'the engine keeps answering');
});

test('several assisted searches interleave with each other and with plain searches', async () => {
  const r = await page.evaluate(async () => {
    const engine = window.engine;
    const baseline = await engine.searchJson('payment OR stripe', { perPage: 7 });
    const checks = [];
    let inFlight = 0;
    let maxInFlight = 0;
    let maxRunning = 0;
    const order = [];
    const during = (tag) => async (info) => {
      order.push(`${tag}${info.stage}`);
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      maxRunning = Math.max(maxRunning, await engine._assistRunningForTests());
      // A plain search while assisted searches wait on their models.
      checks.push((await engine.searchJson('payment OR stripe', { perPage: 7 })) === baseline);
      inFlight -= 1;
    };
    const runs = [
      { tag: 'A', question: 'Where are payments processed?', options: {}, model: { delay: 60 } },
      { tag: 'B', question: 'How are users authenticated?', options: { condenseThreshold: 2, maxReviewFiles: 3 }, model: { delay: 5, query: 'auth* OR login OR token', badFirst: false } },
      { tag: 'C', question: 'Where are refunds stored?', options: { maxTokens: 1500 }, model: { delay: 20, query: 'refund OR transaction' } },
    ];
    const reports = runs.map(() => []);
    const outcomes = await Promise.all(
      runs.map((run, i) =>
        engine.assistedSearch(run.question, {
          ...run.options,
          llm: window.scriptedModel([], { ...run.model, during: during(run.tag) }),
          onStage: (rep) => reports[i].push(rep),
        }),
      ),
    );
    // Each again, alone and without delays.
    const solos = [];
    for (const run of runs) {
      solos.push(await engine.assistedSearch(run.question, { ...run.options, llm: window.scriptedModel([], { ...run.model, delay: 0 }) }));
    }
    return { outcomes, solos, reports, checks, maxInFlight, maxRunning, order, running: await engine._assistRunningForTests() };
  });
  assert.equal(r.maxRunning, 3, 'the three searches were open in the worker at once');
  assert.ok(r.maxInFlight >= 2, `models answering at once: ${r.maxInFlight}`);
  // A: bad query, query, review; B: query, pick, review; C: bad query, query, review.
  assert.deepEqual(r.order.slice().sort(), ['A1', 'A1', 'A4', 'B1', 'B2', 'B4', 'C1', 'C1', 'C4']);
  console.log(`# model calls in order: ${r.order.join(' ')}`);
  assert.ok(r.checks.length === 9 && r.checks.every(Boolean), 'plain searches in between answer as usual');
  r.outcomes.forEach((o, i) => {
    assert.equal(timeless(o), timeless(r.solos[i]), `search ${i}`);
    assert.deepEqual(r.reports[i], o.stages, `reports of search ${i}`);
  });
  assert.notDeepEqual(r.outcomes[0].identifiedFiles, r.outcomes[1].identifiedFiles);
  assert.equal(r.outcomes[1].query, 'auth* OR login OR token');
  assert.equal(r.running, 0);
});

test('an AbortSignal gives up on the search and drops it in the worker', async () => {
  const r = await page.evaluate(async () => {
    const ac = new AbortController();
    let sawSignal = false;
    let error;
    try {
      await window.engine.assistedSearch('Where are payments processed?', {
        signal: ac.signal,
        llm: (prompt, info) => {
          sawSignal = info.signal === ac.signal;
          if (info.stage === 1) return 'payment';
          setTimeout(() => ac.abort(new Error('the user left')), 10);
          return new Promise(() => {}); // a model that never answers
        },
      });
    } catch (e) {
      error = { ...e.toJSON(), cause: e.cause && e.cause.message };
    }
    const runningAfter = await window.engine._assistRunningForTests();
    let calls = 0;
    const pre = await window.engine
      .assistedSearch('x', { signal: AbortSignal.abort(), llm: () => { calls += 1; return 'x'; } })
      .then(() => null, (e) => e.toJSON());
    return { error, sawSignal, runningAfter, pre, calls, running: await window.engine._assistRunningForTests() };
  });
  assert.equal(r.error.code, 'assist.aborted');
  assert.equal(r.error.location, 'stage 4 (review)');
  assert.equal(r.error.cause, 'the user left');
  assert.ok(r.sawSignal, 'the llm callback gets the signal');
  assert.equal(r.runningAfter, 0);
  assert.equal(r.pre.code, 'assist.aborted');
  assert.equal(r.calls, 0);
  assert.equal(r.running, 0);
});

test('an update that swaps the index during an assisted search fails it with assist.index_changed', async () => {
  const other = await site.blank();
  try {
    await openEngine(other, { storage: 'memory' });
    const m = publish(site, HOSTILE_INDEX);
    const r = await other.evaluate(async () => {
      let status;
      const error = await window.engine
        .assistedSearch('Where are payments processed?', {
          llm: async (prompt, info) => {
            if (info.stage === 1) return 'payment';
            status = await window.engine.update();
            return '[]';
          },
        })
        .then(() => null, (e) => e.toJSON());
      return { error, status, running: await window.engine._assistRunningForTests(), revision: (await window.engine.info()).index.revision };
    });
    assert.equal(r.status.status, 'updated');
    assert.equal(r.revision, m.revision);
    assert.equal(r.error.code, 'assist.index_changed');
    assert.match(r.error.message, /start it again/);
    assert.equal(r.running, 0);
  } finally {
    publish(site, SAMPLE_INDEX);
    await closePage(other);
  }
});

test('closing the engine during an assisted search rejects it with engine.closed', async () => {
  const other = await site.blank();
  await openEngine(other, { storage: 'memory' });
  const error = await other.evaluate(() =>
    window.engine
      .assistedSearch('Where are payments processed?', {
        llm: async () => {
          await window.engine.close();
          return 'payment';
        },
      })
      .then(() => null, (e) => e.toJSON()),
  );
  assert.equal(error.code, 'engine.closed');
  await closePage(other);
});

test('assistedSearch checks its arguments', async () => {
  const r = await page.evaluate(async () => {
    const llm = () => 'payment';
    const err = (q, o) => window.engine.assistedSearch(q, o).then(() => null, (e) => e.toJSON());
    return {
      noLlm: await err('q', {}),
      noOptions: await err('q'),
      badQuestion: await err(42, { llm }),
      empty: await err('   ', { llm }),
      unknown: await err('q', { llm, maxTokenz: 10 }),
      badType: await err('q', { llm, retries: 'twice' }),
      tooSmall: await err('q', { llm, maxTokens: 50 }),
      badStage: await err('q', { llm, onStage: 'log' }),
      badSignal: await err('q', { llm, signal: {} }),
      running: await window.engine._assistRunningForTests(),
    };
  });
  assert.equal(r.noLlm.code, 'options.invalid');
  assert.match(r.noLlm.message, /llm callback/);
  assert.equal(r.noOptions.code, 'options.invalid');
  assert.equal(r.badQuestion.code, 'options.invalid');
  assert.equal(r.empty.code, 'options.empty_question');
  assert.equal(r.unknown.code, 'options.invalid');
  assert.match(r.unknown.message, /maxTokenz/);
  assert.equal(r.badType.code, 'options.invalid');
  assert.equal(r.tooSmall.code, 'options.max_tokens_too_small');
  assert.equal(r.badStage.code, 'options.invalid');
  assert.equal(r.badSignal.code, 'options.invalid');
  assert.equal(r.running, 0);
});

test('a throwing onStage listener is reported as a page error and the search goes on', async () => {
  page.errors.length = 0;
  const outcome = await page.evaluate(() =>
    window.engine.assistedSearch('Where are payments processed?', {
      llm: window.scriptedModel([], { badFirst: false }),
      onStage: () => {
        throw new Error('listener bug');
      },
    }),
  );
  assert.ok(outcome.identifiedFiles.length > 0);
  await page.waitForTimeout(50);
  assert.ok(page.errors.some((e) => /listener bug/.test(e.message)), page.errors.map(String).join('\n'));
  page.errors.length = 0;
});

/** CLI stdout with its `N results in X.XXs` footer set to 0.00s. */
const zeroFooter = (s) => s.replace(/results in \d+\.\d\ds\n$/, 'results in 0.00s\n');

test('formatResults renders every format within its budget, as the CLI does', async () => {
  const budgets = [undefined, 2000, 700, 150, 40];
  const seen = { truncated: 0, tooSmall: 0, whole: 0 };
  for (const query of ['payment', 'in:messages refund OR stripe', 'nothing-matches-this-zzzz']) {
    const results = (await page.evaluate((q) => window.engine.search(q, { highlight: 'raw' }), query));
    for (const format of ['terse', 'verbose', 'markdown', 'mcp']) {
      for (const maxTokens of budgets) {
        const what = `${query} ${format} ${maxTokens}`;
        const args = ['search', SAMPLE_INDEX, query, '--format', format];
        if (maxTokens) args.push('--max-tokens', String(maxTokens));
        let native;
        try {
          native = { text: zeroFooter(execFileSync(CLI, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })) };
        } catch (e) {
          native = { stderr: String(e.stderr) };
        }
        const got = await page.evaluate(
          ({ results, format, maxTokens }) =>
            window.engine.formatResults(results, format, { maxTokens, elapsedSecs: 0 }).then((text) => ({ text }), (e) => ({ error: e.toJSON() })),
          { results, format, maxTokens },
        );
        if (native.stderr !== undefined) {
          assert.ok(got.error, `${what}: the CLI failed (${native.stderr}) but formatResults did not`);
          assert.ok(native.stderr.includes(got.error.code), `${what}: ${got.error.code} vs ${native.stderr}`);
          assert.equal(got.error.code, 'options.max_tokens_too_small', what);
          seen.tooSmall += 1;
          continue;
        }
        assert.ok(got.text !== undefined, `${what}: ${JSON.stringify(got.error)}`);
        assert.equal(got.text, native.text, what);
        assert.ok(got.text.endsWith(`${results.totalResultsReturned} results in 0.00s\n`) || maxTokens, what);
        if (maxTokens) assert.ok(tokens(got.text) <= maxTokens, `${what}: ${tokens(got.text)} tokens`);
        if (/truncated: true|\(truncated/.test(got.text)) seen.truncated += 1;
        else seen.whole += 1;
        if (format === 'markdown' || format === 'mcp') {
          assert.ok(got.text.startsWith('---\n'), what);
          assert.match(got.text, /\nquery: "/, what);
          assert.match(got.text, /\ntotal_results: \d+\n/, what);
        }
      }
    }
  }

  assert.ok(seen.truncated > 3 && seen.tooSmall > 0 && seen.whole > 3, JSON.stringify(seen));

  // Shortened and dropped results say so; JSON fits its budget too.
  const r = await page.evaluate(async () => {
    const results = await window.engine.search('payment', { highlight: 'raw' });
    const json = await window.engine.searchJson('payment', { highlight: 'raw' });
    const f = (x, format, o) => window.engine.formatResults(x, format, o).then((t) => t, (e) => e.toJSON());
    return {
      full: await f(results, 'markdown', {}),
      cut: await f(results, 'markdown', { maxTokens: 600 }),
      terseCut: await f(results, 'terse', { maxTokens: 100 }),
      fromText: await f(json, 'markdown', { maxTokens: 600 }),
      defaultFormat: await f(results),
      json: await f(results, 'json', { maxTokens: 800 }),
      tooSmall: await f(results, 'markdown', { maxTokens: 5 }),
      badFormat: await f(results, 'yaml', {}),
      notJson: await f('{not json', 'terse', {}),
      notResults: await f({ some: 'object' }, 'terse', {}),
      badOption: await f(results, 'terse', { maxTokenz: 9 }),
      nothing: await f(null, 'terse', {}),
    };
  });
  assert.ok(tokens(r.full) > 600);
  assert.ok(tokens(r.cut) <= 600);
  assert.match(r.cut, /\ntruncated: true\n/);
  assert.match(r.terseCut, /\(truncated/);
  assert.ok(tokens(r.terseCut) <= 100);
  assert.equal(r.fromText, r.cut, 'JSON text and the object render alike');
  assert.equal(r.defaultFormat, r.full, 'markdown is the default format');
  assert.ok(tokens(r.json) <= 800);
  assert.equal(JSON.parse(r.json).truncated, true);
  assert.equal(r.tooSmall.code, 'options.max_tokens_too_small');
  assert.equal(r.badFormat.code, 'options.bad_format');
  assert.equal(r.notJson.code, 'options.invalid');
  assert.equal(r.notResults.code, 'options.invalid');
  assert.equal(r.badOption.code, 'options.invalid');
  assert.equal(r.nothing.code, 'options.invalid');
});

test('formatOutcome renders the answer and the identified files within the budget, as the CLI does', async () => {
  const { outcome } = await assisted(page, QUESTION, { maxTokens: 900 });
  for (const format of ['markdown', 'terse', 'verbose']) {
    const native = zeroFooter(cliAssist(['--max-tokens', '900'], format).stdout);
    const text = await page.evaluate(
      ({ outcome, format }) => window.engine.formatOutcome(outcome, format, { maxTokens: 900, elapsedSecs: 0 }),
      { outcome, format },
    );
    assert.equal(text, native, format);
    assert.ok(tokens(text) <= 900, `${format}: ${tokens(text)} tokens`);
    assert.ok(text.includes('Payments are handled in the files below.'), format);
    for (const f of outcome.identifiedFiles) assert.ok(text.includes(f.path), `${format}: ${f.path}`);
  }
  const md = await page.evaluate((o) => window.engine.formatOutcome(o), outcome);
  const front = md.split('\n---\n')[0];
  assert.match(front, /^---\nquestion: "Where are payments processed\?"\nanswer: "Payments are handled in the files below\."\nidentified_files: \[/);
  const json = await page.evaluate((o) => window.engine.formatOutcome(JSON.stringify(o), 'json', { maxTokens: 1200 }), outcome);
  assert.ok(tokens(json) <= 1200);
  assert.deepEqual(JSON.parse(json).identifiedFiles, outcome.identifiedFiles);
  const bad = await page.evaluate(() => window.engine.formatOutcome({ question: 'q' }, 'markdown').then(() => null, (e) => e.toJSON()));
  assert.equal(bad.code, 'options.invalid');
});

test('assistGuide is the syntax guide the stage-1 prompt shows the model', async () => {
  const guide = await page.evaluate(() => window.engine.assistGuide());
  const { prompts } = await assisted(page, QUESTION);
  assert.ok(guide.length > 200);
  assert.ok(prompts[0].includes(guide));
  for (const f of ['git-path:', 'lang:', 'repo:']) assert.ok(guide.includes(f), f);
});

test('every key of an outcome is declared in index.d.ts (and its results in results.d.ts)', async () => {
  const declared = (file) => new Set([...fs.readFileSync(path.join(ROOT, 'src/js', file), 'utf8').matchAll(/^\s+([A-Za-z_]+)\??:/gm)].map((m) => m[1]));
  const index = declared('index.d.ts');
  const results = declared('results.d.ts');
  const { outcome } = await assisted(page, QUESTION, { condenseThreshold: 3 });
  const check = (obj, where, keys) => {
    for (const [k, v] of Object.entries(obj)) {
      if (!keys.has(k)) assert.fail(`${where}.${k} is not declared`);
      if (k === 'counts' || k === 'results') continue;
      if (v && typeof v === 'object') {
        for (const item of Array.isArray(v) ? v : [v]) if (item && typeof item === 'object') check(item, `${where}.${k}`, keys);
      }
    }
  };
  check(outcome, 'outcome', index);
  const stageNames = outcome.stages.map((s) => s.name);
  assert.deepEqual(stageNames, ['query', 'query', 'tiny-overviews', 'condensed-pick', 'overviews', 'review']);
  for (const [k] of Object.entries(outcome.results)) assert.ok(results.has(k), `results.${k}`);
  for (const k of Object.keys(outcome.results.searchCriteria)) {
    assert.ok(results.has(k), `searchCriteria.${k} is not declared in results.d.ts`);
  }
});
