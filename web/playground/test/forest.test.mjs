// Unit tests of the forest layout; they need Node only (no browser, no server).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildForest, layoutForest, edgeLabel, nodeKind, wrapText } from '../src/explorer/forest.js';

const session = (id, createdAt, parent, sequence) => ({
  id,
  createdAt,
  forkedFrom: parent ? { sourceSessionId: parent, sourceTurnId: `${parent}-t${sequence}`, sourceTurn: { sequence } } : null,
});

test('forks hang under their source and keep creation order', () => {
  const sessions = [session('b', '2', 'a', 2), session('a', '1'), session('c', '3', 'a', 1), session('d', '4')];
  const { roots, children } = buildForest(sessions);
  assert.deepEqual(roots.map((s) => s.id), ['a', 'd']);
  assert.deepEqual(children.get('a').map((s) => s.id), ['b', 'c']);
});

test('a fork whose source is missing becomes a root', () => {
  const { roots } = buildForest([session('x', '1', 'gone', 1)]);
  assert.deepEqual(roots.map((s) => s.id), ['x']);
});

test('layout centres parents on children and labels edges with the turn', () => {
  const layout = layoutForest([session('a', '1'), session('b', '2', 'a', 2), session('c', '3', 'a', 1)]);
  const at = Object.fromEntries(layout.nodes.map((n) => [n.session.id, n]));
  assert.equal(at.a.depth, 0);
  assert.equal(at.b.depth, 1);
  assert.equal(at.a.row, (at.b.row + at.c.row) / 2);
  assert.ok(at.b.x > at.a.x);
  assert.deepEqual(layout.edges.map((e) => [e.from, e.to, e.label]), [
    ['a', 'b', 'turn 2'],
    ['a', 'c', 'turn 1'],
  ]);
  assert.ok(layout.width > at.b.x && layout.height > at.c.y);
});

test('a cycle in bad data is cut instead of recursing forever', () => {
  const layout = layoutForest([session('a', '1', 'b', 1), session('b', '2', 'a', 1)]);
  assert.deepEqual(layout.nodes.map((n) => n.session.id).sort(), ['a', 'b'], 'no session is hidden');
});

test('edge labels fall back to a short turn id when the turn is gone', () => {
  assert.equal(edgeLabel({ sourceTurnId: 'turn-0123456789', sourceTurn: null }), 'turn turn-0…');
  assert.equal(edgeLabel(null), '');
});

// The points an SVG path of M/H/V/Q commands passes through, with each quadratic corner taken as
// its control and end points (corners are 6px; enough to find a crossing).
function pathPoints(d) {
  const points = [];
  let x = 0;
  let y = 0;
  for (const [, cmd, args] of d.matchAll(/([MHVQ])([^MHVQ]*)/g)) {
    const n = args.trim().split(/[\s,]+/).filter(Boolean).map(Number);
    if (cmd === 'M') [x, y] = n;
    if (cmd === 'H') [x] = n;
    if (cmd === 'V') [y] = n;
    if (cmd === 'Q') {
      points.push([n[0], n[1]]);
      [x, y] = [n[2], n[3]];
    }
    points.push([x, y]);
  }
  return points;
}

// Whether the segment a-b (horizontal, vertical or a short diagonal) touches box, sampled.
function touches([ax, ay], [bx, by], box) {
  const steps = Math.max(1, Math.ceil(Math.hypot(bx - ax, by - ay)));
  for (let i = 0; i <= steps; i++) {
    const x = ax + ((bx - ax) * i) / steps;
    const y = ay + ((by - ay) * i) / steps;
    if (x >= box.x - 1 && x <= box.x + box.width + 1 && y >= box.y - 1 && y <= box.y + box.height + 1) return true;
  }
  return false;
}

// A family as the demo grows one: a root with forks, a fork of a fork, and a second root with one.
const family = [
  session('a', '1'), session('b', '2', 'a', 1), session('c', '3', 'a', 2), session('d', '4', 'a', 3),
  session('e', '5', 'c', 2), session('f', '6', 'c', 1), session('g', '7'), session('h', '8', 'g', 12),
];

for (const mode of ['tree', 'outline']) {
  test(`${mode}: no edge crosses a label and no label overlaps a node`, () => {
    const layout = layoutForest(family, { mode, width: 396 });
    assert.equal(layout.mode, mode);
    assert.equal(layout.edges.length, 6);
    for (const edge of layout.edges) {
      const box = edge.labelBox;
      assert.ok(box.width >= 30, `label "${edge.label}" has room (${box.width}px)`);
      for (const other of layout.edges) {
        const pts = pathPoints(other.path);
        for (let i = 1; i < pts.length; i++) {
          assert.ok(!touches(pts[i - 1], pts[i], box), `edge ${other.from}->${other.to} crosses the label of ${edge.from}->${edge.to}`);
        }
      }
      for (const n of layout.nodes) {
        const apart = box.x + box.width <= n.x || n.x + n.width <= box.x || box.y + box.height <= n.y || n.y + n.height <= box.y;
        assert.ok(apart, `the label of ${edge.from}->${edge.to} overlaps node ${n.session.id}`);
      }
    }
  });
}

test('outline: one row per session, forks indented under their source, nodes fit the width', () => {
  const layout = layoutForest(family, { mode: 'outline', width: 396 });
  const order = [...layout.nodes].sort((p, q) => p.row - q.row).map((n) => n.session.id);
  assert.deepEqual(order, ['a', 'b', 'c', 'e', 'f', 'd', 'g', 'h'], 'pre-order: each fork right under its source');
  const at = Object.fromEntries(layout.nodes.map((n) => [n.session.id, n]));
  assert.ok(at.e.x > at.c.x && at.c.x > at.a.x);
  for (const n of layout.nodes) assert.ok(n.x + n.width <= 396, `${n.session.id} fits in 396px`);
  assert.ok(layout.width <= 396);
});

test('wrapText keeps whole words and never hides the fork number', () => {
  const measure = (t) => t.length * 7;
  assert.deepEqual(wrapText('Plan a weekend in Lisbon (3)', 140, measure), { lines: ['Plan a weekend in', 'Lisbon (3)'], truncated: false });
  assert.deepEqual(wrapText('Short (2)', 140, measure), { lines: ['Short (2)'], truncated: false });
  const long = wrapText('A very long session title that goes on and on about many things (12)', 140, measure);
  assert.equal(long.lines.length, 2);
  assert.ok(long.truncated);
  assert.match(long.lines[1], /… \(12\)$/, 'the fork number survives truncation');
  for (const line of long.lines) assert.ok(measure(line) <= 140, `"${line}" fits`);
  const word = wrapText('Supercalifragilisticexpialidocious', 70, measure);
  for (const line of word.lines) assert.ok(measure(line) <= 70);
});

test('nodeKind: a fork is a fork (its API kind is ROOT), CHILD is a sub-agent, else original', () => {
  assert.equal(nodeKind({ kind: 'ROOT', forkedFrom: { sourceSessionId: 'a' } }), 'fork');
  assert.equal(nodeKind({ kind: 'ROOT', forkedFrom: null }), 'original');
  assert.equal(nodeKind({ kind: 'CHILD', forkedFrom: null }), 'subagent');
});
