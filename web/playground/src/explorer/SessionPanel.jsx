import { Fragment, useEffect, useState } from 'react';
import { kindText, sessionLabel } from './ForestGraph.jsx';
import { isPending } from './queries.js';
import { newerOperation } from './state.js';
import { answerText, promptText, transcriptRows } from './transcript.js';
import { can, useViewer } from '../viewer.jsx';

const BINDING_HELP = {
  BOUND: 'The provider can fork through this turn.',
  RECOVERY_REQUIRED: 'Settled, but the provider cannot fork through this turn right now.',
  UNAVAILABLE: 'This turn has no provider binding to fork from.',
};

/**
 * pendingOperationOf is the operation a new fork through the turn would get back: the server's
 * Turn.pendingForkOperation, brought up to date with what the explorer heard since, or an
 * operation on this turn that started after the turn was read. Null when the turn can be forked.
 */
export function pendingOperationOf(turn, operations) {
  const read = turn.pendingForkOperation;
  const op = read ? newerOperation(read, operations[read.id]) : null;
  if (isPending(op)) return op;
  for (const other of Object.values(operations)) {
    if (other.throughTurnId === turn.id && (!read || other.id !== read.id) && isPending(other)) return other;
  }
  return null;
}

/**
 * SessionPanel shows the selected session's turns and messages, each turn's interactions, and the
 * session's audit messages between the turns where they were reported. A settled turn has a fork button,
 * or, while a fork through it is pending, that operation with what can be done about it.
 */
export function SessionPanel({ detail, selectedId, error, sessions, operations, actions, startError }) {
  const { onSelect } = actions;
  // The model new forks of this session get: the source's until the user types another. A fork
  // with the source's model sends no target, so the child copies the source as it is.
  const sourceModel = detail && detail.id === selectedId ? detail.model || '' : '';
  const [forkModel, setForkModel] = useState(sourceModel);
  useEffect(() => setForkModel(sourceModel), [selectedId, sourceModel]);
  const chosen = forkModel.trim();
  const forkTarget = chosen && chosen !== sourceModel ? { settings: { model: chosen } } : undefined;
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
        <dt>local id</dt><dd><code data-local-id>{detail.id}</code></dd>
        <dt>global id</dt><dd><code data-global-id className="small">{detail.globalId}</code></dd>
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
      {detail.turns.length > 0 && (
        <p className="fork-model">
          <label htmlFor="fork-model">Fork with model</label>{' '}
          <input id="fork-model" name="fork-model" type="text" value={forkModel} placeholder="the source's model"
            spellCheck={false} autoComplete="off" aria-describedby="fork-model-help"
            onChange={(e) => setForkModel(e.target.value)} />{' '}
          <span id="fork-model-help" className="muted small">
            {forkTarget ? `New forks use ${chosen} instead of ${sourceModel || 'no model'}.` : 'New forks keep the source’s model and settings.'}
          </span>
        </p>
      )}
      {detail.turns.length === 0 && <p className="muted">No turns yet.</p>}
      {(detail.turns.length > 0 || (detail.auditMessages || []).length > 0) && (
        <ol className="turns">
          {transcriptRows(detail.turns, detail.auditMessages).map((row) => row.kind === 'audit' ? (
            <AuditMessage key={`audit-${row.audit.id}`} audit={row.audit} />
          ) : (
            <Fragment key={row.turn.id}>
              <Turn
                turn={row.turn}
                pending={pendingOperationOf(row.turn, operations)}
                sessions={sessions}
                actions={actions}
                forkTarget={forkTarget}
                startError={startError && startError.turnId === row.turn.id ? startError.message : null}
              />
              {lineage && lineage.targetTurnId === row.turn.id && <ContinuedFrom lineage={lineage} onSelect={onSelect} />}
            </Fragment>
          ))}
        </ol>
      )}
    </section>
  );
}

/**
 * ContinuedFrom divides a fork's transcript after the turn the fork went through
 * (forkedFrom.targetTurnId): the turns above it were inherited, the ones below are the fork's own.
 * It links to the source conversation, or says it is gone (Lineage.sourceSession is null once the
 * source is deleted).
 */
function ContinuedFrom({ lineage, onSelect }) {
  const source = lineage.sourceSession;
  return (
    <li className="continued-from" role="separator" aria-label="Continued from the source conversation" data-continued-from={lineage.sourceSessionId}>
      {source ? (
        <>
          Continued from{' '}
          <button type="button" className="link" onClick={() => onSelect(lineage.sourceSessionId)}>{source.title || source.id}</button>
          {lineage.sourceTurn ? ` after turn ${lineage.sourceTurn.sequence}` : ''}
        </>
      ) : (
        <>Continued from <code>{lineage.sourceSessionId}</code>: source conversation not found</>
      )}
    </li>
  );
}

/**
 * MessageBody draws a message's typed parts: text as it is, a tool call as its name and input, a
 * tool result as its output (marked when it is an error), an attachment as its file name and media
 * type, reasoning apart and muted. A message without parts (an older server) shows its content.
 */
function MessageBody({ message }) {
  const parts = message.parts;
  if (!parts || parts.length === 0) return <span className="content">{message.content}</span>;
  return (
    <div className="content parts">
      {parts.map((p, i) => <MessagePart key={i} part={p} />)}
    </div>
  );
}

function MessagePart({ part }) {
  switch (part.__typename) {
    case 'ToolCallPart':
      return (
        <div className="part part-tool-call" data-call-id={part.callId}>
          <span className="part-label">tool call</span> <code className="tool-name">{part.name}</code>
          {part.input != null && <pre className="tool-input">{JSON.stringify(part.input, null, 2)}</pre>}
        </div>
      );
    case 'ToolResultPart':
      return (
        <div className={`part part-tool-result${part.isError ? ' is-error' : ''}`} data-call-id={part.callId}>
          <span className="part-label">{part.isError ? 'tool error' : 'tool result'}</span>
          <pre className="tool-output">{part.output}</pre>
        </div>
      );
    case 'AttachmentPart':
      return (
        <div className="part part-attachment" data-attachment-id={part.attachmentId}>
          <span className="part-label">attachment</span> {part.fileName || part.attachmentId}
          {part.mediaType && <span className="media-type"> ({part.mediaType})</span>}
        </div>
      );
    case 'ReasoningPart':
      return <div className="part part-reasoning"><span className="part-label">reasoning</span> {part.text}</div>;
    default:
      return <div className="part part-text">{part.text}</div>;
  }
}

/**
 * AuditMessage draws a turn-less notice of the session ("model changed") between the turns, where
 * its afterSequence puts it (transcriptRows).
 */
function AuditMessage({ audit }) {
  return (
    <li className="audit-message" role="note" aria-label={`Session notice: ${audit.kind}`}
      data-audit-id={audit.id} data-after-sequence={audit.afterSequence}>
      <span className="badge audit-kind">{audit.kind}</span> <span className="audit-content">{audit.content}</span>
    </li>
  );
}

const INTERACTION_STATE_TEXT = {
  PENDING: 'waiting for the user',
  ANSWERED: 'answered',
  CANCELED: 'withdrawn before an answer',
  SUPERSEDED: 'pending in the source when this fork copied it; never answered here',
};

/**
 * Interactions draws a turn's permission and question prompts in the order they were reported:
 * the kind, the prompt (its words, or its JSON), the state (PENDING stands out) and the answer.
 */
function Interactions({ interactions }) {
  if (!interactions || interactions.length === 0) return null;
  return (
    <ul className="interactions" aria-label="Prompts to the user">
      {interactions.map((it) => {
        const words = promptText(it.prompt);
        const answer = answerText(it.answer);
        return (
          <li key={it.id} className={`interaction kind-${it.kind.toLowerCase()} state-${it.state.toLowerCase()}`}
            data-interaction-id={it.id} data-request-id={it.requestId} data-state={it.state} data-kind={it.kind}>
            <div className="interaction-head">
              <span className="part-label interaction-kind">{it.kind === 'PERMISSION' ? 'permission' : 'question'}</span>{' '}
              <span className={`badge interaction-state state-${it.state.toLowerCase()}`} title={INTERACTION_STATE_TEXT[it.state] || undefined}>
                {it.state}
              </span>
              {it.state === 'PENDING' && <span className="muted small"> waiting for the user</span>}
            </div>
            {words ? <div className="interaction-prompt">{words}</div> : <pre className="interaction-prompt">{JSON.stringify(it.prompt, null, 2)}</pre>}
            {answer !== null && (
              <div className="interaction-answer"><span className="part-label">answer</span> <span className="answer-text">{answer}</span></div>
            )}
          </li>
        );
      })}
    </ul>
  );
}

/** TurnDetails draws what a turn reported of its result: its error, file changes and command. */
function TurnDetails({ turn }) {
  const changes = turn.fileChanges || [];
  if (!turn.error && changes.length === 0 && !turn.completedCommand) return null;
  return (
    <div className="turn-details">
      {turn.error && (
        <div className="turn-error" role="note">
          Error <code>{turn.error.code}</code>{turn.error.message ? `: ${turn.error.message}` : ''}
        </div>
      )}
      {turn.completedCommand && (
        <div className="turn-command">
          Ran <code>{turn.completedCommand.command}</code>
          {turn.completedCommand.exitCode != null && ` (exit ${turn.completedCommand.exitCode})`}
        </div>
      )}
      {changes.length > 0 && (
        <ul className="file-changes" aria-label="Files changed">
          {changes.map((c, i) => (
            <li key={i} className={`file-change kind-${c.kind.toLowerCase()}`}>
              <span className="badge">{c.kind.toLowerCase()}</span>{' '}
              {c.previousPath ? `${c.previousPath} → ${c.path}` : c.path}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function Turn({ turn, pending, sessions, actions, forkTarget, startError }) {
  const settled = turn.phase === 'SETTLED';
  const helpId = `fork-help-${turn.id}`;
  const fork = can(useViewer(), 'FORK');
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
            <MessageBody message={m} />
          </li>
        ))}
      </ul>
      <Interactions interactions={turn.interactions} />
      <TurnDetails turn={turn} />
      {settled && pending && <PendingOperation key={pending.id} op={pending} sessions={sessions} actions={actions} />}
      {settled && !pending && (
        <div className="turn-actions">
          <button
            type="button"
            className="primary fork-button"
            disabled={!turn.providerForkBindingAvailable || !fork.allowed}
            aria-describedby={helpId}
            title={fork.reason || undefined}
            onClick={() => actions.onFork(turn, forkTarget)}
          >
            Fork through this turn
          </button>
          <span id={helpId} className="muted small">{fork.reason || BINDING_HELP[turn.providerForkBindingState] || ''}</span>
        </div>
      )}
      {startError && <p className="operation-error" role="alert">Could not start the fork: {startError}</p>}
    </li>
  );
}

const RUNNING_TEXT = {
  FROZEN: 'the history is frozen and the new session id reserved',
  DISPATCHING: 'the provider is being asked to fork',
  MATERIALIZING: 'the provider accepted; the new session is being written',
};

/**
 * PendingOperation stands where the fork button was while a fork through the turn is pending:
 * a running fork shows its phase; a committed one that nobody acknowledged yet has "Acknowledge";
 * one whose delivery is unknown has "Reconcile" (with its attempts and the next automatic one)
 * and "Abandon" (which asks for a reason).
 */
function PendingOperation({ op, sessions, actions }) {
  const fork = can(useViewer(), 'FORK'); // acknowledge, reconcile and abandon need it
  const [busy, setBusy] = useState(null); // the action under way: reconcile | abandon
  const [actionError, setActionError] = useState(null);
  const [asking, setAsking] = useState(false); // the abandon form is open
  const [reason, setReason] = useState('');
  const run = async (name, fn) => {
    setBusy(name);
    setActionError(null);
    try {
      await fn();
      return true;
    } catch (err) {
      setActionError(`${name === 'reconcile' ? 'Reconcile' : 'Abandon'} failed: ${err.message}`);
      return false;
    } finally {
      setBusy(null);
    }
  };
  const target = op.targetSessionId && sessions[op.targetSessionId];
  const headId = `pending-${op.id}`;
  return (
    <div
      className={`pending-operation pending-${op.status.toLowerCase()}`}
      role="group"
      aria-labelledby={headId}
      data-operation-id={op.id}
      data-pending-phase={op.phase}
      data-reconcile-attempts={op.reconcileAttempts ?? 0}
    >
      {op.status === 'ACCEPTED' && (
        <p id={headId} className="pending-head" aria-live="polite">
          <span className="badge pending-badge">{op.phase}</span> Fork in progress: {RUNNING_TEXT[op.phase] || op.phase.toLowerCase()}.
        </p>
      )}
      {op.status === 'COMMITTED' && (
        <>
          <p id={headId} className="pending-head">
            <span className="badge pending-badge">COMMITTED</span> Forked into{' '}
            <button type="button" className="link" onClick={() => actions.onSelect(op.targetSessionId)}>
              {target ? sessionLabel(target) : op.targetSessionId}
            </button>
            , not acknowledged yet: until it is, a new fork through this turn returns this one.
          </p>
          <div className="turn-actions">
            <button type="button" className="primary acknowledge-button" disabled={Boolean(op.acking) || !fork.allowed}
              title={fork.reason || undefined} onClick={() => actions.onAcknowledge(op)}>
              {op.acking ? 'Acknowledging…' : 'Acknowledge'}
            </button>
          </div>
          {!fork.allowed && <p className="muted small action-reason">{fork.reason}</p>}
          {op.ackError && <p className="operation-error" role="alert">Acknowledge failed: {op.ackError}</p>}
        </>
      )}
      {op.status === 'UNKNOWN' && (
        <>
          <p id={headId} className="pending-head">
            <span className="badge pending-badge pending-unknown-badge">DELIVERY UNKNOWN</span> The provider may or may
            not have made this fork. forkgraph asks it what became of the request; it never forks twice.
          </p>
          <ReconcileStatus op={op} />
          <div className="turn-actions">
            <button
              type="button"
              className="reconcile-button"
              disabled={busy !== null || !fork.allowed}
              title={fork.reason || undefined}
              onClick={() => run('reconcile', () => actions.onReconcile(op))}
            >
              {busy === 'reconcile' ? 'Reconciling…' : 'Reconcile now'}
            </button>
            {!asking && (
              <button type="button" className="abandon-button" disabled={busy !== null || !fork.allowed}
                title={fork.reason || undefined} onClick={() => setAsking(true)}>
                Abandon…
              </button>
            )}
          </div>
          {!fork.allowed && <p className="muted small action-reason">{fork.reason}</p>}
          {asking && (
            <form
              className="abandon-form"
              onSubmit={async (e) => {
                e.preventDefault();
                if (!reason.trim()) return;
                if (await run('abandon', () => actions.onAbandon(op, reason.trim()))) setAsking(false);
              }}
            >
              <label htmlFor={`abandon-reason-${op.id}`}>Why stop waiting? (kept as the fork’s error)</label>
              <input
                id={`abandon-reason-${op.id}`}
                className="abandon-reason"
                value={reason}
                maxLength={1000}
                onChange={(e) => setReason(e.target.value)}
                autoFocus
              />
              <p className="muted small">If the provider did make the child, it is orphaned: forkgraph forgets it. The turn can be forked again.</p>
              <div className="turn-actions">
                <button type="submit" className="danger abandon-confirm" disabled={!reason.trim() || busy !== null}>
                  {busy === 'abandon' ? 'Abandoning…' : 'Abandon this fork'}
                </button>
                <button type="button" onClick={() => setAsking(false)} disabled={busy !== null}>Cancel</button>
              </div>
            </form>
          )}
        </>
      )}
      {actionError && <p className="operation-error" role="alert">{actionError}</p>}
    </div>
  );
}

// The clock of the "next attempt in …" line, ticking while an unknown operation is shown.
function useNow(active) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return undefined;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [active]);
  return now;
}

function clock(value) {
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? String(value) : d.toLocaleTimeString();
}

function ReconcileStatus({ op }) {
  const now = useNow(Boolean(op.nextReconcileAt));
  const attempts = op.reconcileAttempts ?? 0;
  let next = 'no automatic attempt is scheduled (its provider cannot tell); you can still abandon it';
  if (op.nextReconcileAt) {
    const seconds = Math.round((Date.parse(op.nextReconcileAt) - now) / 1000);
    next = `next automatic attempt ${seconds > 0 ? `in ${seconds} s` : 'now'} (${clock(op.nextReconcileAt)})`;
  }
  return (
    <p className="reconcile-status small">
      <span className="reconcile-attempts">{attempts === 1 ? '1 attempt' : `${attempts} attempts`}</span>
      {op.lastReconciledAt ? `, last at ${clock(op.lastReconciledAt)}` : ''}; <span className="reconcile-next">{next}</span>.
      {op.error ? <><br />Error: {op.error}</> : null}
    </p>
  );
}
