import { kindText, sessionLabel } from './ForestGraph.jsx';

const BINDING_HELP = {
  BOUND: 'The provider can fork through this turn.',
  RECOVERY_REQUIRED: 'Settled, but the provider cannot fork through this turn right now.',
  UNAVAILABLE: 'This turn has no provider binding to fork from.',
};

/** SessionPanel shows the selected session's turns and messages, with a fork button per settled turn. */
export function SessionPanel({ detail, selectedId, error, sessions, onFork, onSelect, startError }) {
  if (!selectedId) {
    return (
      <section className="panel session-panel" aria-label="Session">
        <h2>Session</h2>
        <p className="muted">Select a session in the graph to see its turns and fork it.</p>
      </section>
    );
  }
  if (!detail || detail.id !== selectedId) {
    return (
      <section className="panel session-panel" aria-label="Session">
        <h2>Session</h2>
        {error ? <p className="banner banner-error" role="alert">{error}</p> : <p className="muted">Loading…</p>}
      </section>
    );
  }
  const lineage = detail.forkedFrom;
  const source = lineage && sessions[lineage.sourceSessionId];
  return (
    <section className="panel session-panel" aria-labelledby="session-title" data-session-id={detail.id}>
      <h2 id="session-title">{sessionLabel(detail)}</h2>
      <dl className="facts">
        <dt>id</dt><dd><code>{detail.id}</code></dd>
        <dt>kind</dt><dd data-kind={detail.kind}>{kindText(detail, sessions)} <span className="muted small">(kind {detail.kind})</span></dd>
        <dt>provider</dt><dd>{detail.provider}{detail.model ? ` · ${detail.model}` : ''}</dd>
        {lineage && (
          <>
            <dt>forked from</dt>
            <dd>
              {source ? (
                <button type="button" className="link" onClick={() => onSelect(lineage.sourceSessionId)}>{sessionLabel(source)}</button>
              ) : (
                <code>{lineage.sourceSessionId}</code>
              )}
              {' '}through turn {lineage.sourceTurn ? lineage.sourceTurn.sequence : <code>{lineage.sourceTurnId}</code>}
            </dd>
          </>
        )}
      </dl>
      {error && <p className="banner banner-error" role="alert">{error}</p>}
      {detail.turns.length === 0 ? (
        <p className="muted">No turns yet.</p>
      ) : (
        <ol className="turns">
          {detail.turns.map((turn) => (
            <Turn key={turn.id} turn={turn} onFork={onFork} startError={startError && startError.turnId === turn.id ? startError.message : null} />
          ))}
        </ol>
      )}
    </section>
  );
}

function Turn({ turn, onFork, startError }) {
  const settled = turn.phase === 'SETTLED';
  const helpId = `fork-help-${turn.id}`;
  return (
    <li className="turn" data-turn-id={turn.id} data-sequence={turn.sequence}>
      <div className="turn-head">
        <span className="turn-seq">Turn {turn.sequence}</span>
        <span className={`badge phase-${turn.phase.toLowerCase()}`}>{turn.phase.toLowerCase()}</span>
        {turn.outcome && <span className={`badge outcome-${turn.outcome.toLowerCase()}`}>{turn.outcome.toLowerCase()}</span>}
      </div>
      <ul className="messages">
        {(turn.messages || []).map((m, i) => (
          <li key={m.id || i} className={`message role-${m.role.toLowerCase()}`}>
            <span className="role">{m.role.toLowerCase()}</span>
            <span className="content">{m.content}</span>
          </li>
        ))}
      </ul>
      {settled && (
        <div className="turn-actions">
          <button
            type="button"
            className="primary fork-button"
            disabled={!turn.providerForkBindingAvailable}
            aria-describedby={helpId}
            onClick={() => onFork(turn)}
          >
            Fork through this turn
          </button>
          <span id={helpId} className="muted small">{BINDING_HELP[turn.providerForkBindingState] || ''}</span>
        </div>
      )}
      {startError && <p className="operation-error" role="alert">Could not start the fork: {startError}</p>}
    </li>
  );
}
