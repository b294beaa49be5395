// The pure parts of the explorer's session list (SessionList.jsx), unit-tested in
// test/session-list.test.mjs: which rows a scrolled window draws, when to read the next page, and
// the counts it shows. The list holds only the pages it has read, and draws only the rows in view
// (plus a few either side), so 100,000 sessions cost the rows on screen, not the workspace.

export const ROW_HEIGHT = 44;
export const OVERSCAN = 6;
// Read the next page once the window is this many rows from the end of what is loaded.
export const PREFETCH_ROWS = 60;

/**
 * visibleRange is the half-open range [start, end) of row indexes drawn for a viewport scrolled to
 * scrollTop with the given height, over `count` loaded rows.
 */
export function visibleRange(scrollTop, height, count, rowHeight = ROW_HEIGHT, overscan = OVERSCAN) {
  if (count <= 0) return { start: 0, end: 0 };
  const first = Math.floor(Math.max(0, scrollTop) / rowHeight);
  const shown = Math.ceil(Math.max(0, height) / rowHeight) + 1;
  const start = Math.max(0, Math.min(count - 1, first - overscan));
  const end = Math.min(count, first + shown + overscan);
  return { start, end: Math.max(start, end) };
}

/** wantsMore tells whether a window ending at row `end` should read the next page now. */
export function wantsMore({ end, loaded, hasNext, loading, error }) {
  return hasNext && !loading && !error && end + PREFETCH_ROWS >= loaded;
}

const number = new Intl.NumberFormat('en-US');
/** formatCount writes a count with thousands separators: 10200 → "10,200". */
export const formatCount = (n) => number.format(n);

/**
 * countText says honestly how much of the list is loaded: "5,000 of 10,200 sessions", or with a
 * search "12 of 340 sessions match “kraken”"; once everything is loaded, just the total. When the
 * server's count is a lower bound (totalCountIsLowerBound: a search of several words counts only
 * the first few thousand sessions of its rarest word) it says so: "50 of 4,000+ sessions match",
 * until the list has read to its end (hasNext false) and knows the number.
 */
export function countText({ loaded, total, search, lowerBound = false, hasNext = true }) {
  if (total == null) return search ? `Searching “${search}”…` : 'Loading sessions…';
  if (lowerBound && !hasNext) return countText({ loaded, total: loaded, search });
  const shown = lowerBound ? Math.max(total, loaded) : total;
  const plus = lowerBound ? '+' : '';
  const one = shown === 1 && !lowerBound;
  const noun = one ? 'session' : 'sessions';
  const what = search ? `${noun} ${one ? 'matches' : 'match'} “${search}”` : noun;
  if (loaded >= shown) return `${formatCount(shown)}${plus} ${what}`;
  return `${formatCount(loaded)} of ${formatCount(shown)}${plus} ${what}`;
}
