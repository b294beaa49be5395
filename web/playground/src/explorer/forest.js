// Layout of the fork forest: sessions are nodes, each forkedFrom lineage an edge from the source
// session to the fork. Two layouts, both pure functions unit-tested in test/forest.test.mjs:
//
// - "tree" (wide panes): left to right; depth gives the column, leaves take consecutive rows and
//   each parent is centred on its children. An edge leaves its parent, runs down a trunk just right
//   of it and turns into the child; its "turn N" label sits above the last, horizontal stretch, so
//   no edge ever crosses a label.
// - "outline" (narrow panes): one session per row, forks indented under their source like a file
//   tree, nodes as wide as the pane; labels sit in the gap above their fork, right of the trunk.

export const NODE_WIDTH = 200;
export const NODE_HEIGHT = 62; // two title lines and the kind line
const COLUMN_GAP = 96; // room for the trunk and the edge label
const ROW_GAP = 14;
const OUTLINE_INDENT = 28;
const OUTLINE_ROW_GAP = 24; // room for the edge label above each fork
const OUTLINE_MIN_WIDTH = 180;
const TRUNK = 16; // from the parent's edge to its trunk
const CORNER = 6;
export const LABEL_HEIGHT = 16;
const MARGIN = 12;

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

/** estimateLabelWidth is the width of an edge label's text (11px, semi-bold) without a canvas. */
export const estimateLabelWidth = (text) => text.length * 6.4;

/**
 * layoutForest returns positioned nodes (x, y, width, height), edges with their SVG path and label
 * box, and the drawing's size. options.mode is "tree" (default) or "outline"; outline fits nodes to
 * options.width. options.measureLabel(text) gives a label's text width. Cycles (which the API never
 * produces) are cut so a bad payload cannot hang the page.
 */
export function layoutForest(sessions, options = {}) {
  const mode = options.mode === 'outline' ? 'outline' : 'tree';
  const measureLabel = options.measureLabel || estimateLabelWidth;
  const { roots, children } = buildForest(sessions);
  const nodes = [];
  const edges = [];
  const placed = new Set();
  let nextRow = 0;
  let maxDepth = 0;

  // Depth-first; tree rows are assigned to leaves, outline rows in visiting order (pre-order).
  const place = (session, depth) => {
    placed.add(session.id);
    maxDepth = Math.max(maxDepth, depth);
    const node = { session, depth, row: 0 };
    nodes.push(node);
    if (mode === 'outline') node.row = nextRow++;
    const kids = (children.get(session.id) || []).filter((k) => !placed.has(k.id));
    const rows = [];
    for (const kid of kids) {
      if (placed.has(kid.id)) continue; // reached through a cycle already
      rows.push(place(kid, depth + 1));
      edges.push({ from: session.id, to: kid.id, label: edgeLabel(kid.forkedFrom) });
    }
    if (mode === 'tree') node.row = rows.length ? (rows[0] + rows[rows.length - 1]) / 2 : nextRow++;
    return node.row;
  };
  for (const root of roots) if (!placed.has(root.id)) place(root, 0);
  // Sessions caught in a cycle have no root above them; draw them as roots rather than hide them.
  for (const s of [...sessions].sort(byCreation)) if (!placed.has(s.id)) place(s, 0);

  let width = 0;
  let height = 0;
  if (nodes.length && mode === 'tree') {
    for (const n of nodes) {
      n.x = MARGIN + n.depth * (NODE_WIDTH + COLUMN_GAP);
      n.y = MARGIN + n.row * (NODE_HEIGHT + ROW_GAP);
      n.width = NODE_WIDTH;
      n.height = NODE_HEIGHT;
    }
    width = MARGIN * 2 + maxDepth * (NODE_WIDTH + COLUMN_GAP) + NODE_WIDTH;
    height = MARGIN * 2 + (nextRow - 1) * (NODE_HEIGHT + ROW_GAP) + NODE_HEIGHT;
  } else if (nodes.length) {
    // Every node reaches the right edge of the pane, however deep it is indented.
    for (const n of nodes) {
      n.x = MARGIN + n.depth * OUTLINE_INDENT;
      n.y = MARGIN + n.row * (NODE_HEIGHT + OUTLINE_ROW_GAP);
      n.width = Math.max(OUTLINE_MIN_WIDTH, (options.width || 0) - MARGIN - n.x);
      n.height = NODE_HEIGHT;
      width = Math.max(width, n.x + n.width + MARGIN);
    }
    height = MARGIN * 2 + (nextRow - 1) * (NODE_HEIGHT + OUTLINE_ROW_GAP) + NODE_HEIGHT;
  }

  const byId = new Map(nodes.map((n) => [n.session.id, n]));
  for (const edge of edges) {
    const from = byId.get(edge.from);
    const to = byId.get(edge.to);
    const labelWidth = Math.ceil(measureLabel(edge.label)) + 12;
    if (mode === 'tree') {
      const x1 = from.x + from.width;
      const y1 = from.y + from.height / 2;
      const trunk = x1 + TRUNK;
      const x2 = to.x;
      const y2 = to.y + to.height / 2;
      edge.path = elbow(x1, y1, trunk, y2, x2);
      const room = x2 - 6 - (trunk + 6);
      const w = Math.min(labelWidth, room);
      edge.labelBox = { x: x2 - 6 - w, y: y2 - 4 - LABEL_HEIGHT, width: w, height: LABEL_HEIGHT };
    } else {
      const trunk = from.x + OUTLINE_INDENT / 2;
      const y2 = to.y + to.height / 2;
      edge.path = `M${trunk},${from.y + from.height} V${y2 - CORNER} Q${trunk},${y2} ${trunk + CORNER},${y2} H${to.x}`;
      const w = Math.min(labelWidth, to.width - 12);
      edge.labelBox = { x: to.x + 6, y: to.y - (OUTLINE_ROW_GAP + LABEL_HEIGHT) / 2, width: w, height: LABEL_HEIGHT };
    }
  }
  return { mode, nodes, edges, width, height };
}

// elbow is the path from (x1, y1) right to the trunk at x = trunk, along it to y2, and right to
// (x2, y2), with rounded corners.
function elbow(x1, y1, trunk, y2, x2) {
  const dy = y2 - y1;
  if (Math.abs(dy) < 2 * CORNER) return `M${x1},${y1} H${trunk} V${y2} H${x2}`;
  const s = Math.sign(dy);
  return `M${x1},${y1} H${trunk - CORNER} Q${trunk},${y1} ${trunk},${y1 + s * CORNER} V${y2 - s * CORNER} Q${trunk},${y2} ${trunk + CORNER},${y2} H${x2}`;
}

/** edgeLabel names the turn a fork was made through: its sequence, else a short turn id. */
export function edgeLabel(forkedFrom) {
  if (!forkedFrom) return '';
  if (forkedFrom.sourceTurn && forkedFrom.sourceTurn.sequence != null) return `turn ${forkedFrom.sourceTurn.sequence}`;
  const id = forkedFrom.sourceTurnId || '';
  return id ? `turn ${id.length > 7 ? id.slice(0, 6) + '…' : id}` : 'turn ?';
}

/**
 * wrapText breaks text into at most maxLines lines no wider than width (measure(text) gives a
 * width). Words are kept whole unless one alone is too wide. When the text needs more lines, the
 * last line ends in "…" but keeps a trailing fork number such as " (3)", which is what tells forks
 * of one family apart. Returns { lines, truncated }.
 */
export function wrapText(text, width, measure, maxLines = 2) {
  const full = String(text || '').replace(/\s+/g, ' ').trim();
  if (!full) return { lines: [''], truncated: false };
  const lines = [];
  let rest = full;
  while (rest && lines.length < maxLines) {
    if (measure(rest) <= width) {
      lines.push(rest);
      rest = '';
      break;
    }
    if (lines.length === maxLines - 1) break;
    const [line, remainder] = fitLine(rest, width, measure);
    lines.push(line);
    rest = remainder;
  }
  if (!rest) return { lines, truncated: false };
  const suffix = (/ \(\d+\)$/.exec(full) || [''])[0];
  let head = suffix && rest.endsWith(suffix) ? rest.slice(0, -suffix.length) : rest;
  const tail = `…${suffix}`;
  while (head && measure(head + tail) > width) head = head.slice(0, -1);
  lines.push(head.trimEnd() + tail);
  return { lines, truncated: true };
}

// fitLine takes the longest prefix of words of text that fits width (or, for one long word, the
// longest prefix of characters) and returns it with what is left.
function fitLine(text, width, measure) {
  const words = text.split(' ');
  let line = words[0];
  let i = 1;
  while (i < words.length && measure(`${line} ${words[i]}`) <= width) line = `${line} ${words[i++]}`;
  if (measure(line) <= width) return [line, words.slice(i).join(' ')];
  let n = line.length - 1;
  while (n > 1 && measure(line.slice(0, n)) > width) n--;
  return [line.slice(0, n), [line.slice(n), ...words.slice(i)].join(' ')];
}

/** ellipsize shortens text to width with a trailing "…". */
export function ellipsize(text, width, measure) {
  const s = String(text || '');
  if (measure(s) <= width) return s;
  let n = s.length;
  while (n > 0 && measure(s.slice(0, n) + '…') > width) n--;
  return s.slice(0, n).trimEnd() + '…';
}

/**
 * nodeKind tells what a session is in the graph: "fork" (made by a fork; kind ROOT), "subagent"
 * (kind CHILD, a provider's sub-agent) or "original" (a ROOT session not made by a fork).
 */
export function nodeKind(session) {
  if (session.forkedFrom) return 'fork';
  if (session.kind === 'CHILD') return 'subagent';
  return 'original';
}
