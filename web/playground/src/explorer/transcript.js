// Pure helpers of the session transcript (SessionPanel.jsx): where a session's audit messages
// stand among its turns, and how an interaction's prompt and answer read as text.

/**
 * transcriptRows interleaves a session's turns (in sequence order) with its audit messages: each
 * audit message goes after the last turn whose sequence is at most its afterSequence (so one
 * placed after turn 3 follows turn 3, and one placed before any turn, afterSequence 0, comes
 * first). A fork's child may not have every sequence of its source, hence "at most" rather than
 * "equal". Audit messages keep the server's order (afterSequence, then time) within one place.
 * Returns a list of { kind: 'turn', turn } and { kind: 'audit', audit }.
 */
export function transcriptRows(turns, auditMessages) {
  const audits = [...(auditMessages || [])].sort((a, b) => a.afterSequence - b.afterSequence);
  const rows = [];
  let next = 0;
  const flush = (upTo) => {
    while (next < audits.length && audits[next].afterSequence < upTo) rows.push({ kind: 'audit', audit: audits[next++] });
  };
  for (const turn of turns || []) {
    flush(turn.sequence);
    rows.push({ kind: 'turn', turn });
  }
  flush(Infinity);
  return rows;
}

// The prompt fields a runtime usually puts its words in, in the order the explorer prefers them.
const PROMPT_TEXT_KEYS = ['question', 'message', 'text', 'title', 'description', 'prompt', 'command', 'path'];

/**
 * promptText is the line an interaction's prompt is shown by: its first string field among the
 * usual ones (question, message, text, title, description, prompt, command, path), else null
 * (the explorer then shows the prompt as JSON).
 */
export function promptText(prompt) {
  if (!prompt || typeof prompt !== 'object' || Array.isArray(prompt)) return null;
  for (const key of PROMPT_TEXT_KEYS) {
    if (typeof prompt[key] === 'string' && prompt[key].trim()) return prompt[key];
  }
  return null;
}

/**
 * answerText shows an answer (any JSON value): a string as it is, anything else as compact JSON,
 * null when there is none.
 */
export function answerText(answer) {
  if (answer === null || answer === undefined) return null;
  if (typeof answer === 'string') return answer;
  return JSON.stringify(answer);
}
