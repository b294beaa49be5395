// Unit tests of the transcript's placement of audit messages and its interaction text
// (src/explorer/transcript.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { answerText, promptText, transcriptRows } from '../src/explorer/transcript.js';

const shape = (rows) => rows.map((r) => (r.kind === 'turn' ? `t${r.turn.sequence}` : `a:${r.audit.id}`));

test('transcriptRows places each audit message after the turn its afterSequence names', () => {
  const turns = [{ sequence: 1 }, { sequence: 2 }, { sequence: 3 }];
  const audits = [
    { id: 'late', afterSequence: 3 },
    { id: 'first', afterSequence: 0 },
    { id: 'mid', afterSequence: 1 },
    { id: 'mid2', afterSequence: 1 },
  ];
  assert.deepEqual(shape(transcriptRows(turns, audits)), ['a:first', 't1', 'a:mid', 'a:mid2', 't2', 't3', 'a:late']);
});

test('transcriptRows keeps a place the turns skip, and audit messages of a session without turns', () => {
  // A fork's child: its turns are 1 and 5; a notice after 3 goes after turn 1, before turn 5.
  assert.deepEqual(shape(transcriptRows([{ sequence: 1 }, { sequence: 5 }], [{ id: 'x', afterSequence: 3 }])), ['t1', 'a:x', 't5']);
  assert.deepEqual(shape(transcriptRows([], [{ id: 'x', afterSequence: 0 }])), ['a:x']);
  assert.deepEqual(shape(transcriptRows([{ sequence: 1 }], undefined)), ['t1']);
  // One placed after a turn not loaded (yet) still shows, at the end.
  assert.deepEqual(shape(transcriptRows([{ sequence: 1 }], [{ id: 'y', afterSequence: 9 }])), ['t1', 'a:y']);
});

test('promptText picks the words of a prompt, answerText shows any JSON answer', () => {
  assert.equal(promptText({ question: 'Which branch?', options: ['a'] }), 'Which branch?');
  assert.equal(promptText({ tool: 'shell', command: 'rm -rf build' }), 'rm -rf build');
  assert.equal(promptText({ tool: 'shell' }), null);
  assert.equal(promptText({ question: '  ' }), null);
  assert.equal(promptText(null), null);
  assert.equal(answerText('main'), 'main');
  assert.equal(answerText({ allow: true }), '{"allow":true}');
  assert.equal(answerText(false), 'false');
  assert.equal(answerText(null), null);
});
