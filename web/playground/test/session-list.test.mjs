// Unit tests of the session list's windowing and counts (src/explorer/sessionList.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ROW_HEIGHT, OVERSCAN, PREFETCH_ROWS, countText, formatCount, visibleRange, wantsMore } from '../src/explorer/sessionList.js';

test('visibleRange draws the rows in view and a few either side, however many are loaded', () => {
  assert.deepEqual(visibleRange(0, 440, 0), { start: 0, end: 0 });
  assert.deepEqual(visibleRange(0, 440, 5), { start: 0, end: 5 });
  const top = visibleRange(0, 440, 100_000);
  assert.deepEqual(top, { start: 0, end: 11 + OVERSCAN });
  const deep = visibleRange(90_000 * ROW_HEIGHT, 440, 100_000);
  assert.equal(deep.start, 90_000 - OVERSCAN);
  assert.ok(deep.end - deep.start <= 11 + 2 * OVERSCAN, 'the window stays the viewport\'s size');
  const end = visibleRange(100_000 * ROW_HEIGHT, 440, 100_000);
  assert.equal(end.end, 100_000);
  assert.ok(end.start < end.end, 'scrolled past the end still draws the last rows');
});

test('wantsMore reads the next page near the end of what is loaded, once at a time', () => {
  assert.equal(wantsMore({ end: 10, loaded: 200, hasNext: true, loading: false }), false);
  assert.equal(wantsMore({ end: 200 - PREFETCH_ROWS, loaded: 200, hasNext: true, loading: false }), true);
  assert.equal(wantsMore({ end: 200, loaded: 200, hasNext: true, loading: true }), false, 'one read at a time');
  assert.equal(wantsMore({ end: 200, loaded: 200, hasNext: false, loading: false }), false, 'nothing more to read');
  assert.equal(wantsMore({ end: 200, loaded: 200, hasNext: true, loading: false, error: 'x' }), false, 'an error waits for a retry');
});

test('countText says how much is loaded, with thousands separators', () => {
  assert.equal(formatCount(10200), '10,200');
  assert.equal(countText({ loaded: 5000, total: 10200 }), '5,000 of 10,200 sessions');
  assert.equal(countText({ loaded: 3, total: 3 }), '3 sessions');
  assert.equal(countText({ loaded: 1, total: 1, search: 'kraken' }), '1 session matches “kraken”');
  assert.equal(countText({ loaded: 200, total: 1234, search: 'kraken' }), '200 of 1,234 sessions match “kraken”');
  assert.equal(countText({ loaded: 0, total: 0, search: 'absent' }), '0 sessions match “absent”');
  assert.equal(countText({ loaded: 0, total: null }), 'Loading sessions…');
  // A lower bound (totalCountIsLowerBound) says so until the list has read to its end.
  assert.equal(countText({ loaded: 50, total: 4000, search: 'half odd', lowerBound: true }), '50 of 4,000+ sessions match “half odd”');
  assert.equal(countText({ loaded: 0, total: 0, search: 'half odd', lowerBound: true }), '0+ sessions match “half odd”');
  assert.equal(countText({ loaded: 120, total: 100, search: 'a b', lowerBound: true }), '120+ sessions match “a b”');
  assert.equal(countText({ loaded: 1, total: 1, search: 'a b', lowerBound: true, hasNext: false }), '1 session matches “a b”');
});
