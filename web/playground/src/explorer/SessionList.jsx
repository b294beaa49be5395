import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react';
import { request } from '../graphql.js';
import { sessionLabel } from './ForestGraph.jsx';
import { SESSION_COUNT, SESSION_LIST_PAGE } from './queries.js';
import { ROW_HEIGHT, countText, visibleRange, wantsMore } from './sessionList.js';

const PAGE = 200; // the server's largest page
const SEARCH_DELAY_MS = 250;

const empty = (search) => ({ search, rows: [], total: null, lowerBound: false, endCursor: null, hasNext: true, loading: false, error: null });

/**
 * SessionList is every session of the workspace, or those a search finds, oldest first: read a
 * page at a time as it is scrolled (Query.sessions with `after`, and `search`), and drawn only
 * where it is in view, so it stays as fast at 100,000 sessions as at 10. Its count says how many
 * are loaded of how many there are. `version` changes when the workspace's sessions changed
 * (events), and the count is read again; `sessions` (the explorer's map) keeps titles fresh.
 * onTotal gets every count of the whole workspace (without a search) it reads.
 */
export function SessionList({ workspaceId, selectedId, onSelect, sessions, version, onTotal }) {
  const [draft, setDraft] = useState('');
  const [list, setList] = useState(() => empty(''));
  const listRef = useRef(list);
  listRef.current = list;
  const generation = useRef(0);
  const boxRef = useRef(null);
  const [view, setView] = useState({ top: 0, height: 0 });

  // A new search starts a new list; answers to an older one are dropped by generation.
  useEffect(() => {
    const next = draft.trim();
    if (next === listRef.current.search) return undefined;
    const timer = setTimeout(() => {
      generation.current += 1;
      setList(empty(next));
      if (boxRef.current) boxRef.current.scrollTop = 0;
    }, SEARCH_DELAY_MS);
    return () => clearTimeout(timer);
  }, [draft]);

  const loadMore = useCallback(async () => {
    const gen = generation.current;
    const current = listRef.current;
    setList((l) => ({ ...l, loading: true }));
    try {
      const data = await request(SESSION_LIST_PAGE, {
        workspaceId, first: PAGE, after: current.endCursor, search: current.search || null,
      });
      if (gen !== generation.current) return;
      const conn = data.sessions;
      if (!current.search && onTotal) onTotal(conn.totalCount);
      setList((l) => {
        const seen = new Set(l.rows.map((r) => r.id));
        const rows = l.rows.concat(conn.edges.map((e) => e.node).filter((n) => !seen.has(n.id)));
        return {
          ...l, rows, total: conn.totalCount, lowerBound: conn.totalCountIsLowerBound, loading: false, hasNext: conn.pageInfo.hasNextPage,
          endCursor: conn.pageInfo.endCursor || l.endCursor,
        };
      });
    } catch (err) {
      if (gen === generation.current) setList((l) => ({ ...l, loading: false, error: err.message }));
    }
  }, [workspaceId, onTotal]);

  // Sessions changed elsewhere: count again, and let a list read to its end read on from there.
  useEffect(() => {
    if (!version) return undefined;
    const gen = generation.current;
    const timer = setTimeout(async () => {
      try {
        const search = listRef.current.search;
        const data = await request(SESSION_COUNT, { workspaceId, search: search || null });
        if (!search && onTotal) onTotal(data.sessions.totalCount);
        if (gen === generation.current) setList((l) => ({ ...l, total: data.sessions.totalCount, lowerBound: data.sessions.totalCountIsLowerBound, hasNext: true }));
      } catch {
        // the next change or scroll tries again
      }
    }, 500);
    return () => clearTimeout(timer);
  }, [version, workspaceId, onTotal]);

  useLayoutEffect(() => {
    const box = boxRef.current;
    if (!box) return undefined;
    const read = () => setView({ top: box.scrollTop, height: box.clientHeight });
    read();
    const observer = new ResizeObserver(read);
    observer.observe(box);
    return () => observer.disconnect();
  }, []);

  const range = visibleRange(view.top, view.height, list.rows.length);
  useEffect(() => {
    if (wantsMore({ end: range.end, loaded: list.rows.length, ...list })) loadMore();
  }, [range.end, list, loadMore]);

  const rows = [];
  for (let i = range.start; i < range.end; i++) {
    const row = list.rows[i];
    const session = { ...row, ...(sessions[row.id] || {}) };
    rows.push(
      <SessionRow key={row.id} index={i} session={session} selected={row.id === selectedId} onSelect={onSelect} />,
    );
  }
  const height = list.rows.length * ROW_HEIGHT;
  return (
    <section className="panel session-list" aria-label="Sessions">
      <form className="session-search" role="search" onSubmit={(e) => e.preventDefault()}>
        <label htmlFor="session-search-input">Find a session</label>
        <input
          id="session-search-input"
          type="search"
          placeholder="Words of a title or a message"
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
          spellCheck={false}
          autoComplete="off"
        />
      </form>
      <p className="session-list-count" role="status" data-loaded={list.rows.length} data-total={list.total ?? ''} data-search={list.search}>
        {countText({ loaded: list.rows.length, total: list.total, search: list.search, lowerBound: list.lowerBound, hasNext: list.hasNext })}
      </p>
      {list.error && (
        <p className="banner banner-error" role="alert">
          {list.error} <button type="button" onClick={() => setList((l) => ({ ...l, error: null }))}>Retry</button>
        </p>
      )}
      <div
        className="session-list-scroll"
        ref={boxRef}
        onScroll={(e) => setView({ top: e.currentTarget.scrollTop, height: e.currentTarget.clientHeight })}
        role="listbox"
        aria-label={list.search ? `Sessions matching ${list.search}` : 'Sessions, oldest first'}
        aria-busy={list.loading}
      >
        <div className="session-list-rows" style={{ height }}>{rows}</div>
        {list.total === 0 && !list.hasNext && <p className="empty">{list.search ? 'No session has every word of this search.' : 'No sessions yet.'}</p>}
      </div>
    </section>
  );
}

function SessionRow({ index, session, selected, onSelect }) {
  const onKeyDown = (e) => {
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      onSelect(session.id);
    }
  };
  const created = session.createdAt ? session.createdAt.slice(0, 16).replace('T', ' ') : '';
  return (
    <div
      className={`session-row${selected ? ' selected' : ''}`}
      style={{ top: index * ROW_HEIGHT, height: ROW_HEIGHT }}
      role="option"
      tabIndex={0}
      aria-selected={selected}
      aria-posinset={index + 1}
      data-session-id={session.id}
      data-index={index}
      onClick={() => onSelect(session.id)}
      onKeyDown={onKeyDown}
    >
      <span className="session-row-title">{sessionLabel(session)}</span>
      <span className="session-row-meta">{[session.forkedFrom ? 'fork' : session.kind === 'CHILD' ? 'sub-agent' : 'original', created].filter(Boolean).join(' · ')}</span>
    </div>
  );
}
