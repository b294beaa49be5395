// Unit tests of the forest layout; they need Node only (no browser, no server).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildForest, layoutForest, edgeLabel } from '../src/explorer/forest.js';

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
  assert.equal(edgeLabel({ sourceTurnId: 'turn-0123456789', sourceTurn: null }), 'turn turn-012…');
  assert.equal(edgeLabel(null), '');
});
