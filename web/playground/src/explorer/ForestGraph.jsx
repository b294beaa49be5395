import { useMemo } from 'react';
import { NODE_HEIGHT, NODE_WIDTH, layoutForest } from './forest.js';

const TITLE_CHARS = 25;

function truncate(text, max) {
  const s = text || '';
  return s.length > max ? s.slice(0, max - 1) + '…' : s;
}

/** sessionLabel is the visible name of a session: its title, or its id when untitled. */
export function sessionLabel(session) {
  return (session && (session.title || session.id)) || '';
}

/**
 * ForestGraph draws the fork forest as SVG. Nodes are focusable buttons (Tab, Enter/Space) and
 * each edge carries the turn the fork went through.
 */
export function ForestGraph({ sessions, loaded, selectedId, highlightIds, onSelect, workspaceId }) {
  const layout = useMemo(() => layoutForest(Object.values(sessions)), [sessions]);
  if (!loaded) return <p className="empty">Loading sessions…</p>;
  if (!layout.nodes.length) return <p className="empty">No sessions in workspace “{workspaceId}” yet.</p>;
  return (
    <div className="graph-scroll">
      <svg
        className="forest"
        width={layout.width}
        height={layout.height}
        viewBox={`0 0 ${layout.width} ${layout.height}`}
        role="group"
        aria-label={`Fork forest of workspace ${workspaceId}: ${layout.nodes.length} sessions`}
      >
        <g className="edges" aria-hidden="true">
          {layout.edges.map((edge) => <Edge key={`${edge.from}->${edge.to}`} edge={edge} />)}
        </g>
        <g className="nodes">
          {layout.nodes.map((node) => (
            <Node
              key={node.session.id}
              node={node}
              selected={node.session.id === selectedId}
              fresh={highlightIds.has(node.session.id)}
              onSelect={onSelect}
            />
          ))}
        </g>
      </svg>
    </div>
  );
}

function Edge({ edge }) {
  const midX = (edge.x1 + edge.x2) / 2;
  const d = `M${edge.x1},${edge.y1} C${midX},${edge.y1} ${midX},${edge.y2} ${edge.x2},${edge.y2}`;
  const labelWidth = Math.max(44, edge.label.length * 7 + 10);
  const labelX = midX;
  const labelY = edge.y2;
  return (
    <g className="edge" data-edge={`${edge.from}->${edge.to}`}>
      <path d={d} />
      <rect x={labelX - labelWidth / 2} y={labelY - 10} width={labelWidth} height={20} rx={10} />
      <text x={labelX} y={labelY + 4} textAnchor="middle">{edge.label}</text>
    </g>
  );
}

function Node({ node, selected, fresh, onSelect }) {
  const { session, x, y } = node;
  const onKeyDown = (e) => {
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      onSelect(session.id);
    }
  };
  const kind = (session.kind || '').toLowerCase();
  const classes = ['node', selected && 'selected', fresh && 'fresh', kind === 'child' && 'child'].filter(Boolean).join(' ');
  return (
    <g
      className={classes}
      transform={`translate(${x},${y})`}
      role="button"
      tabIndex={0}
      aria-pressed={selected}
      aria-label={`Session ${sessionLabel(session)}${session.forkedFrom ? ', a fork' : ''}`}
      data-session-id={session.id}
      onClick={() => onSelect(session.id)}
      onKeyDown={onKeyDown}
    >
      <title>{`${sessionLabel(session)} (${session.id})`}</title>
      <rect width={NODE_WIDTH} height={NODE_HEIGHT} rx={8} />
      <text x={12} y={19} className="node-title">{truncate(sessionLabel(session), TITLE_CHARS)}</text>
      <text x={12} y={36} className="node-meta">{truncate([kind, session.provider, session.id].filter(Boolean).join(' · '), 34)}</text>
    </g>
  );
}
