package models

import (
	"strings"

	"github.com/forkgraph/forkgraph/forkengine"
)

// The domain spells enum values in lower_snake_case and the API in UPPER_SNAKE_CASE with the same
// words, so one pair of conversions serves every enum. Inbound values were already validated by
// the generated UnmarshalGQL of each enum.

func wire[API ~string, Domain ~string](d Domain) API {
	if name, ok := wireNames[string(d)]; ok {
		return API(name)
	}
	return API(strings.ToUpper(string(d)))
}

// wireNames memoizes wire for the values of every enum: strings.ToUpper builds a new string on
// each call, and a page of 100 sessions converts some 500 enum values (kinds, phases, outcomes,
// roles). The conversion does not depend on the enum, so one map serves them all.
var wireNames = func() map[string]string {
	names := map[string]string{}
	wireNamesOf(names, AllSessionKind)
	wireNamesOf(names, AllTurnPhase)
	wireNamesOf(names, AllTurnOutcome)
	wireNamesOf(names, AllMessageRole)
	wireNamesOf(names, AllForkOperationStatus)
	wireNamesOf(names, AllForkOperationPhase)
	wireNamesOf(names, AllWorkspaceEventKind)
	wireNamesOf(names, AllProviderForkBindingState)
	wireNamesOf(names, AllForkVerificationStatus)
	return names
}()

func wireNamesOf[API ~string](names map[string]string, values []API) {
	for _, v := range values {
		names[strings.ToLower(string(v))] = string(v)
	}
}

func domain[Domain ~string, API ~string](a API) Domain { return Domain(strings.ToLower(string(a))) }

// Domain returns the engine's session kind.
func (k SessionKind) Domain() forkengine.SessionKind { return domain[forkengine.SessionKind](k) }

// Domain returns the engine's turn phase.
func (p TurnPhase) Domain() forkengine.TurnPhase { return domain[forkengine.TurnPhase](p) }

// Domain returns the engine's turn outcome.
func (o TurnOutcome) Domain() forkengine.TurnOutcome { return domain[forkengine.TurnOutcome](o) }

// Domain returns the engine's submission content.
func (c SubmissionContent) Domain() forkengine.SubmissionContent {
	return domain[forkengine.SubmissionContent](c)
}

// Domain returns the engine's message role.
func (r MessageRole) Domain() forkengine.MessageRole { return domain[forkengine.MessageRole](r) }

// DomainStatuses returns the internal statuses a public status stands for (ACCEPTED covers every
// active status).
func (s ForkOperationStatus) DomainStatuses() []forkengine.OperationStatus {
	if s == ForkOperationStatusAccepted {
		return []forkengine.OperationStatus{
			forkengine.StatusPrepared, forkengine.StatusDispatching, forkengine.StatusProviderAccepted,
		}
	}
	return []forkengine.OperationStatus{domain[forkengine.OperationStatus](s)}
}

// PublicStatus returns the status and phase clients see for an internal status.
func PublicStatus(s forkengine.OperationStatus) (ForkOperationStatus, ForkOperationPhase) {
	status, phase := s.Public()
	return wire[ForkOperationStatus](status), wire[ForkOperationPhase](phase)
}

// EventKindFrom returns the API kind of a domain event kind.
func EventKindFrom(k forkengine.EventKind) WorkspaceEventKind { return wire[WorkspaceEventKind](k) }

// BindingStateFrom returns the API forkability state of a domain binding state.
func BindingStateFrom(s forkengine.BindingState) ProviderForkBindingState {
	return wire[ProviderForkBindingState](s)
}
