// Compiles the Relay app (src/) against the live schema: introspects the running server, prints the
// schema as SDL into schema/ (gitignored), and runs relay-compiler, which writes the artifacts the
// tests import into __generated__/ (gitignored). Both are made anew on every run, so an artifact
// never outlives the schema it was compiled against.
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildClientSchema, getIntrospectionQuery, printSchema } from 'graphql';

const here = dirname(fileURLToPath(import.meta.url));

/** fetchSchemaSDL introspects the server at graphqlURL and returns its schema as SDL. */
export async function fetchSchemaSDL(graphqlURL) {
  const res = await fetch(graphqlURL, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify({ query: getIntrospectionQuery() }),
  });
  const body = await res.json();
  if (!res.ok || body.errors) {
    throw new Error(`introspection failed (HTTP ${res.status}): ${JSON.stringify(body.errors ?? body)}`);
  }
  return printSchema(buildClientSchema(body.data));
}

/**
 * compileRelay writes the live schema and runs relay-compiler over src/; it throws with the
 * compiler's output when the compiler refuses the documents (for example a fragment that needs a
 * field or interface the server does not have).
 */
export async function compileRelay(graphqlURL) {
  const sdl = await fetchSchemaSDL(graphqlURL);
  rmSync(join(here, '__generated__'), { recursive: true, force: true });
  mkdirSync(join(here, '__generated__'));
  mkdirSync(join(here, 'schema'), { recursive: true });
  writeFileSync(join(here, 'schema', 'forkgraph.graphql'), sdl);
  // The relay-compiler package's main export is the path of its native binary for this platform.
  const compiler = createRequire(import.meta.url)('relay-compiler');
  if (!compiler) throw new Error(`relay-compiler ships no binary for ${process.platform}/${process.arch}`);
  const run = spawnSync(compiler, ['--noWatchman', '--output=quiet-with-errors', join(here, 'relay.config.json')], {
    cwd: here,
    env: { ...process.env, NO_COLOR: '1' },
    encoding: 'utf8',
  });
  if (run.status !== 0) {
    throw new Error(`relay-compiler exited ${run.status}:\n${run.stdout}\n${run.stderr}`);
  }
  // The artifacts are CommonJS (`require('./X.graphql')` between them, which ESM cannot resolve
  // without an extension); e2e/ is "type": "module", so mark the artifact folder CommonJS.
  writeFileSync(join(here, '__generated__', 'package.json'), '{"type": "commonjs"}\n');
  return run.stdout + run.stderr;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const base = process.env.FORKGRAPH_URL ?? 'http://127.0.0.1:8080';
  process.stdout.write(await compileRelay(`${base}/graphql`));
}
