import { useLayoutEffect, useMemo, useRef, useState } from 'react';
import { LABEL_HEIGHT, edgeLabel, ellipsize, estimateLabelWidth, layoutForest, nodeKind, wrapText } from './forest.js';

const PAD = 12; // text inset inside a node
// Below this pane width a forest wider than the pane is drawn as an indented outline instead.
const OUTLINE_BELOW = 700;

/** sessionLabel is the visible name of a session: its title, or its id when untitled. */
export function sessionLabel(session) {
  return (session && (session.title || session.id)) || '';
}

/** kindText says in words what a session is: a fork of which session, a sub-agent, or an original. */
export function kindText(session, sessions) {
  const kind = nodeKind(session);
  if (kind === 'fork') {
    const source = sessions[session.forkedFrom.sourceSessionId];
    return `fork of ${source ? sessionLabel(source) : session.forkedFrom.sourceSessionId}`;
  }
  return kind === 'subagent' ? 'sub-agent session' : 'original session';
}

// A text measurer on a canvas in the page's own font, so wrapped lines fit their node exactly;
// without a canvas (never in a browser) an estimate stands in.
function makeMeasurer(font, fallbackPerChar) {
  let ctx = null;
  try {
    ctx = document.createElement('canvas').getContext('2d');
  } catch {
    ctx = null;
  }
  if (!ctx) return (text) => String(text).length * fallbackPerChar;
  const family = getComputedStyle(document.documentElement).fontFamily || 'sans-serif';
  ctx.font = `${font} ${family}`;
  const cache = new Map();
  return (text) => {
    let w = cache.get(text);
    if (w === undefined) {
      w = ctx.measureText(text).width;
      cache.set(text, w);
    }
    return w;
  };
}

let measurers = null;
function getMeasurers() {
  if (!measurers) {
    measurers = {
      title: makeMeasurer('600 13px', 7.4),
      meta: makeMeasurer('400 11px', 6),
      label: makeMeasurer('600 11px', estimateLabelWidth('x')),
    };
  }
  return measurers;
}

/**
 * ForestGraph draws the fork forest as SVG. Nodes are focusable buttons (Tab, Enter/Space) and
 * each edge carries the turn the fork went through. A wide pane shows a left-to-right tree; a
 * narrow one (a phone) an indented outline that fits its width.
 */
export function ForestGraph({ sessions, loaded, selectedId, highlightIds, onSelect, workspaceId }) {
  const boxRef = useRef(null);
  const [paneWidth, setPaneWidth] = useState(0);
  useLayoutEffect(() => {
    const box = boxRef.current;
    if (!box) return undefined;
    const read = () => {
      const style = getComputedStyle(box);
      setPaneWidth(Math.floor(box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight)));
    };
    read();
    const observer = new ResizeObserver(read);
    observer.observe(box);
    return () => observer.disconnect();
  }, []);

  const layout = useMemo(() => {
    const measure = getMeasurers();
    const list = Object.values(sessions);
    const tree = layoutForest(list, { mode: 'tree', measureLabel: measure.label });
    if (paneWidth > 0 && paneWidth < OUTLINE_BELOW && tree.width > paneWidth) {
      return layoutForest(list, { mode: 'outline', width: paneWidth, measureLabel: measure.label });
    }
    return tree;
  }, [sessions, paneWidth]);

  // The box is always rendered, so its width is known before the first node arrives.
  let content;
  if (!loaded) content = <p className="empty">Loading sessions…</p>;
  else if (!layout.nodes.length) content = <p className="empty">No sessions in workspace “{workspaceId}” yet.</p>;
  return (
    <div className="graph-scroll" ref={boxRef} data-layout={layout.mode}>
      {content || (<svg
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
              sessions={sessions}
              selected={node.session.id === selectedId}
              fresh={highlightIds.has(node.session.id)}
              onSelect={onSelect}
            />
          ))}
        </g>
      </svg>)}
    </div>
  );
}

function Edge({ edge }) {
  const box = edge.labelBox;
  return (
    <g className="edge" data-edge={`${edge.from}->${edge.to}`}>
      <path d={edge.path} />
      <rect x={box.x} y={box.y} width={box.width} height={box.height} rx={LABEL_HEIGHT / 2} />
      <text x={box.x + box.width / 2} y={box.y + 12} textAnchor="middle">{edge.label}</text>
    </g>
  );
}

function Node({ node, sessions, selected, fresh, onSelect }) {
  const { session, x, y, width, height } = node;
  const onKeyDown = (e) => {
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      onSelect(session.id);
    }
  };
  const measure = getMeasurers();
  const title = sessionLabel(session);
  const { lines } = wrapText(title, width - 2 * PAD, measure.title, 2);
  const kind = nodeKind(session);
  const described = kindText(session, sessions);
  const through = kind === 'fork' ? ` through ${edgeLabel(session.forkedFrom)}` : '';
  const meta = ellipsize(kind === 'fork' ? described : `${described} · ${session.provider || ''}`, width - 2 * PAD, measure.meta);
  const classes = ['node', `node-${kind}`, selected && 'selected', fresh && 'fresh', kind === 'subagent' && 'child'].filter(Boolean).join(' ');
  const titleY = lines.length > 1 ? 21 : 26;
  return (
    <g
      className={classes}
      transform={`translate(${x},${y})`}
      role="button"
      tabIndex={0}
      aria-pressed={selected}
      aria-label={`Session ${title}, ${described}${through}`}
      data-session-id={session.id}
      data-node-kind={kind}
      onClick={() => onSelect(session.id)}
      onKeyDown={onKeyDown}
    >
      <title>{`${title}\n${described}${through}\nlocal id: ${session.id}`}</title>
      <rect width={width} height={height} rx={8} />
      <text x={PAD} y={titleY} className="node-title">
        {lines.map((line, i) => (
          <tspan key={i} x={PAD} dy={i === 0 ? 0 : 16}>{line}</tspan>
        ))}
      </text>
      <text x={PAD} y={height - 10} className="node-meta">{meta}</text>
    </g>
  );
}
