// Writes README.md's examples into a consumer project, so test.sh compiles them under --strict
// and runs the Node one: a fenced block right after `<!-- example: NAME.EXT -->` becomes NAME.EXT.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [readme, dir] = process.argv.slice(2);
const text = readFileSync(readme, 'utf8');
const re = /<!-- example: ([\w.-]+) -->\s*```\w*\n([\s\S]*?)```/g;
let n = 0;
for (const m of text.matchAll(re)) {
  writeFileSync(join(dir, m[1]), m[2]);
  n++;
}
if (n === 0) {
  console.error(`${readme}: no <!-- example: ... --> blocks`);
  process.exit(1);
}
console.log(`wrote ${n} README example(s) into ${dir}`);
