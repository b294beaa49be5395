// Writes dist/build-manifest.json after `vite build`: a sha256 over every input of the build (the
// sources, @forkgraph/client's sources, the build scripts, package.json and the lockfile) and the
// sha256 of every emitted file.
// playground_test.go recomputes both without Node, so a commit that changes a source but not the
// build, or edits dist/ by hand, fails `go test`. Keep the input list and the digest format in step
// with sourceInputs/sourceDigest in playground_test.go.
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const INPUT_FILES = ['index.html', 'package.json', 'package-lock.json', 'vite.config.js'];
// The explorer bundles @forkgraph/client from its sources (vite.config.js).
const INPUT_DIRS = ['src', 'scripts', '../../clients/typescript/src'];

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    return statSync(full).isDirectory() ? walk(full) : [full];
  });
}

const rel = (full) => relative(root, full).split(sep).join('/');
const sha256 = (data) => createHash('sha256').update(data).digest('hex');

const inputs = [...INPUT_FILES, ...INPUT_DIRS.flatMap((d) => walk(join(root, d)).map(rel))].sort();
const digest = createHash('sha256');
for (const path of inputs) digest.update(`${path}\n${sha256(readFileSync(join(root, path)))}\n`);

const distDir = join(root, 'dist');
const files = {};
for (const full of walk(distDir).sort()) {
  const path = relative(distDir, full).split(sep).join('/');
  if (path === 'build-manifest.json') continue;
  const body = readFileSync(full);
  files[path] = { bytes: body.length, sha256: sha256(body) };
}

const manifest = {
  rebuild: 'npm --prefix web/playground ci && npm --prefix web/playground run build',
  sourceSha256: digest.digest('hex'),
  inputs,
  files,
};
writeFileSync(join(distDir, 'build-manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
const total = Object.values(files).reduce((n, f) => n + f.bytes, 0);
console.log(`build-manifest.json: ${inputs.length} inputs, ${Object.keys(files).length} files, ${total} bytes`);
