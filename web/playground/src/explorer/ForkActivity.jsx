import { sessionLabel } from './ForestGraph.jsx';
import { can, useViewer } from '../viewer.jsx';

const STEPS = ['FROZEN', 'DISPATCHING', 'MATERIALIZING', 'COMMITTED'];
const FAILURE_PHASES = new Set(['FAILED', 'DELIVERY_UNKNOWN']);
const SHOWN = 8;
const FAILURE_REASONS = { abandoned: 'abandoned', reconciled_absent: 'the provider has no such child' };

/** ForkActivity lists recent fork operations with their phases, live. */
export function ForkActivity({ operations, order, sessions, onSelect, onRetryAck }) {
  const shown = order.map((id) => operations[id]).filter(Boolean).slice(0, SHOWN);
  return (
    <section className="panel fork-activity" aria-labelledby="fork-activity-title">
      <h2 id="fork-activity-title">Fork activity</h2>
      {shown.length === 0 ? (
        <p className="muted">Forks you start, and forks other clients run in this workspace, appear here live.</p>
      ) : (
        <ul className="operations" aria-live="polite">
          {shown.map((op) => (
            <Operation key={op.id} op={op} sessions={sessions} onSelect={onSelect} onRetryAck={onRetryAck} />
          ))}
        </ul>
      )}
    </section>
  );
}

function Operation({ op, sessions, onSelect, onRetryAck }) {
  const fork = can(useViewer(), 'FORK');
  const failed = FAILURE_PHASES.has(op.phase);
  const reached = STEPS.indexOf(op.phase);
  const source = sessions[op.sourceSessionId];
  const target = op.targetSessionId && sessions[op.targetSessionId];
  return (
    <li className={`operation phase-${(op.phase || '').toLowerCase()}`} data-operation-id={op.id} data-phase={op.phase} data-target-session-id={op.targetSessionId || ''} data-acknowledged={op.acknowledgedAt ? 'true' : 'false'}>
      <div className="operation-head">
        <span>Fork of <strong>{source ? sessionLabel(source) : op.sourceSessionId}</strong></span>
        {op.mine && <span className="tag">yours</span>}
      </div>
      <ol className="phases" aria-label="Phases">
        {STEPS.map((step, i) => {
          const status = stepStatus(op, step, i, reached, failed);
          const label = status === 'failed' ? op.phase.replace('_', ' ') : step;
          return (
            <li key={step} className={`step step-${status}`} aria-current={status === 'current' ? 'step' : undefined}>
              {label}
            </li>
          );
        })}
      </ol>
      {failed && (
        <p className="operation-error" role="alert">
          {op.phase === 'DELIVERY_UNKNOWN'
            ? `Delivery unknown: the provider may have created a child. forkgraph asks it what became of the request (${op.reconcileAttempts || 0} ${op.reconcileAttempts === 1 ? 'attempt' : 'attempts'} so far) and never forks again; reconcile or abandon it on its turn. Error: `
            : `Fork failed${FAILURE_REASONS[op.errorReason] ? ` (${FAILURE_REASONS[op.errorReason]})` : ''}: `}
          {op.error || 'no error message'}
        </p>
      )}
      {op.phase === 'COMMITTED' && op.targetSessionId && (
        <p className="operation-result">
          New session{' '}
          <button type="button" className="link" onClick={() => onSelect(op.targetSessionId)}>
            {target ? sessionLabel(target) : op.targetSessionId}
          </button>
          {op.acknowledgedAt ? <span className="ack"> · acknowledged</span> : null}
        </p>
      )}
      {op.followError && <p className="operation-error">{op.followError}</p>}
      {op.ackError && (
        <p className="operation-error">
          Acknowledge failed: {op.ackError}{' '}
          <button type="button" className="link" disabled={!fork.allowed} title={fork.reason || undefined} onClick={() => onRetryAck(op)}>
            Retry
          </button>
        </p>
      )}
    </li>
  );
}

// A step is done once the operation passed it (or we saw it live); a failure takes the last slot.
function stepStatus(op, step, index, reached, failed) {
  if (failed && index === STEPS.length - 1) return 'failed';
  if (op.phase === 'COMMITTED') return 'done';
  if (step === op.phase) return 'current';
  if (index < reached || (op.seen || []).includes(step)) return 'done';
  return 'todo';
}
