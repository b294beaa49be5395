// Layout of the fork forest: sessions are nodes, each forkedFrom lineage an edge from the source
// session to the fork. The forest is drawn left to right: depth gives the column, and leaves take
// consecutive rows with each parent centred on its children. Pure functions, unit-tested in
// test/forest.test.mjs.

export const NODE_WIDTH = 224;
export const NODE_HEIGHT = 46;
const COLUMN_GAP = 96; // room for the edge label ("turn 2")
const ROW_GAP = 14;
const MARGIN = 16;

const byCreation = (a, b) =>
  String(a.createdAt || '').localeCompare(String(b.createdAt || '')) || a.id.localeCompare(b.id);

/**
 * buildForest groups sessions into trees. A session whose forkedFrom source is not in the list
 * (deleted or on another page) becomes a root so it is never hidden.
 */
export function buildForest(sessions) {
  const byId = new Map(sessions.map((s) => [s.id, s]));
  const children = new Map();
  const roots = [];
  for (const s of [...sessions].sort(byCreation)) {
    const parentId = s.forkedFrom && s.forkedFrom.sourceSessionId;
    if (parentId && parentId !== s.id && byId.has(parentId)) {
      if (!children.has(parentId)) children.set(parentId, []);
      children.get(parentId).push(s);
    } else {
      roots.push(s);
    }
  }
  return { roots, children };
}

/**
 * layoutForest returns positioned nodes, edges with their labels, and the drawing's size.
 * Cycles (which the API never produces) are cut so a bad payload cannot hang the page.
 */
export function layoutForest(sessions) {
  const { roots, children } = buildForest(sessions);
  const nodes = [];
  const edges = [];
  const placed = new Set();
  let nextRow = 0;
  let maxDepth = 0;

  const place = (session, depth) => {
    placed.add(session.id);
    maxDepth = Math.max(maxDepth, depth);
    const kids = (children.get(session.id) || []).filter((k) => !placed.has(k.id));
    const rows = kids.map((kid) => place(kid, depth + 1));
    const row = rows.length ? (rows[0] + rows[rows.length - 1]) / 2 : nextRow++;
    const node = { session, depth, row, x: xOf(depth), y: yOf(row) };
    nodes.push(node);
    for (const kid of kids) edges.push({ from: session.id, to: kid.id, label: edgeLabel(kid.forkedFrom) });
    return row;
  };
  for (const root of roots) place(root, 0);
  // Sessions caught in a cycle have no root above them; draw them as roots rather than hide them.
  for (const s of [...sessions].sort(byCreation)) if (!placed.has(s.id)) place(s, 0);

  const byId = new Map(nodes.map((n) => [n.session.id, n]));
  for (const edge of edges) {
    const from = byId.get(edge.from);
    const to = byId.get(edge.to);
    edge.x1 = from.x + NODE_WIDTH;
    edge.y1 = from.y + NODE_HEIGHT / 2;
    edge.x2 = to.x;
    edge.y2 = to.y + NODE_HEIGHT / 2;
  }
  const width = nodes.length ? xOf(maxDepth) + NODE_WIDTH + MARGIN : 0;
  const height = nodes.length ? yOf(nextRow - 1) + NODE_HEIGHT + MARGIN : 0;
  return { nodes, edges, width, height };
}

/** edgeLabel names the turn a fork was made through: its sequence, else a short turn id. */
export function edgeLabel(forkedFrom) {
  if (!forkedFrom) return '';
  if (forkedFrom.sourceTurn && forkedFrom.sourceTurn.sequence != null) return `turn ${forkedFrom.sourceTurn.sequence}`;
  const id = forkedFrom.sourceTurnId || '';
  return id ? `turn ${id.length > 10 ? id.slice(0, 8) + '…' : id}` : 'turn ?';
}

function xOf(depth) {
  return MARGIN + depth * (NODE_WIDTH + COLUMN_GAP);
}

function yOf(row) {
  return MARGIN + row * (NODE_HEIGHT + ROW_GAP);
}
