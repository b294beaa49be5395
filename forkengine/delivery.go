package forkengine

import (
	"fmt"
	"strings"
	"time"
)

// Fixed error texts for outcomes the provider did not explain.
const (
	errTextNotStarted      = "provider fork was not started"
	errTextRejected        = "provider rejected the fork"
	errTextUnsupported     = "provider does not support this fork"
	errTextDeliveryUnknown = "provider fork delivery is unknown"
	errTextInvalidResult   = "provider fork result was invalid"
	errTextTimedOut        = "provider fork timed out"
	errTextUnknownRestart  = "provider fork delivery is unknown after restart"
)

// verdict is what the engine concludes from one Fork call: the status to record and how, and for
// any status but provider_accepted the error text that record writes.
type verdict struct {
	status OperationStatus
	record func(*ForkOperation, time.Time)
	text   string
}

// judgeDelivery maps a driver's answer to the next status (reference §3.5). Only an explicit
// "never made a child" (not_started, rejected, unsupported) may fail an operation; only a clean,
// verifiable acceptance may accept it. Everything else, including errors, timeouts and answers
// that cannot be checked, is unknown: a child may exist, so the fork is never sent again.
func judgeDelivery(op ForkOperation, desc Descriptor, res ForkResult, callErr error, timedOut bool) verdict {
	text := providerErrorText(res, callErr, timedOut)
	switch res.Disposition {
	case DispositionNotStarted:
		return settled(StatusFailed, orText(text, errTextNotStarted))
	case DispositionRejected:
		return settled(StatusFailed, orText(text, errTextRejected))
	case DispositionUnsupported:
		return settled(StatusFailed, orText(text, errTextUnsupported))
	case DispositionAccepted:
		if text != "" {
			break // an accepted answer that also reports an error cannot be trusted
		}
		accepted, problem := checkAcceptance(op, desc, res)
		if problem == "" {
			return verdict{status: StatusProviderAccepted, record: accepted}
		}
		text = errTextInvalidResult + ": " + problem
	case DispositionUnknown:
		text = orText(text, errTextDeliveryUnknown)
	default:
		text = orText(text, errTextInvalidResult+": missing disposition")
	}
	return settled(StatusUnknown, text)
}

// settled is the verdict of a delivery that ends with text as the operation's error, made fit
// to store (cleanProviderText: the text may quote the provider).
func settled(status OperationStatus, text string) verdict {
	text = cleanProviderText(text)
	return verdict{status: status, record: settle(text), text: text}
}

// providerErrorText is the provider's own explanation, if there is one, made fit to store. A
// failed call's Go error is never shown: its text names the adapter's address (and whatever
// credentials its URL carries), so the caller logs it and the operation gets a fixed text.
func providerErrorText(res ForkResult, callErr error, timedOut bool) string {
	if text := cleanProviderText(res.Error); text != "" {
		return text
	}
	switch {
	case timedOut:
		return errTextTimedOut
	case callErr != nil:
		return errTextCallFailed
	}
	return ""
}

func orText(text, fallback string) string {
	if text != "" {
		return text
	}
	return fallback
}

// checkAcceptance validates the evidence of an accepted fork before anything is written. It
// returns the recorder of the acceptance, or what is wrong with it.
func checkAcceptance(op ForkOperation, desc Descriptor, res ForkResult) (func(*ForkOperation, time.Time), string) {
	child := strings.TrimSpace(res.ProviderSessionID)
	childProblem := providerIDProblem("providerSessionId", child)
	mode := res.StateBindingMode
	if mode == "" {
		mode = BindingHostCopy
	}
	switch {
	case child == "":
		return nil, "the child provider session id is empty"
	case childProblem != "":
		return nil, "the child " + childProblem
	case child == op.SourceProviderSessionID:
		return nil, "the child provider session id is the source's"
	case mode != desc.StateBindingMode:
		return nil, fmt.Sprintf("binding mode %q differs from the driver's %q", mode, desc.StateBindingMode)
	}
	if problem := checkBindingEvidence(op, mode, res); problem != "" {
		return nil, problem
	}
	bindings := append([]TurnBinding(nil), res.TurnBindings...)
	for i := range bindings {
		bindings[i].ProviderTurnID = strings.TrimSpace(bindings[i].ProviderTurnID)
	}
	return func(next *ForkOperation, at time.Time) {
		next.AcceptedAt = &at
		next.TargetProviderSessionID, next.StateBindingMode = child, mode
		next.TargetTurnBindings, next.Receipt = bindings, res.Receipt
		next.Error = ""
	}, ""
}

// checkBindingEvidence enforces the mode's contract: host_copy carries nothing (the host keeps the
// source bindings); provider_owned carries a receipt and exactly one usable binding per
// provider-bound snapshot turn, in order, so every copied turn stays forkable in the child.
func checkBindingEvidence(op ForkOperation, mode BindingMode, res ForkResult) string {
	if mode == BindingHostCopy {
		if len(res.TurnBindings) > 0 || res.Receipt != "" {
			return "a host_copy result carries turn bindings or a receipt"
		}
		return ""
	}
	if strings.TrimSpace(res.Receipt) == "" {
		return "a provider_owned result has no receipt"
	}
	if problem := providerIDProblem("receipt", res.Receipt); problem != "" {
		return "the receipt: " + problem // it is stored as it came, so it follows the free-text rule
	}
	_, bound := prefixCounts(op.Snapshot)
	if len(res.TurnBindings) != bound {
		return fmt.Sprintf("%d turn bindings returned for %d provider-bound turns", len(res.TurnBindings), bound)
	}
	seen := map[string]bool{}
	for i, b := range res.TurnBindings {
		id := strings.TrimSpace(b.ProviderTurnID)
		idProblem := providerIDProblem("providerTurnId", id)
		switch {
		case id == "":
			return fmt.Sprintf("turn binding %d has no provider turn id", i)
		case idProblem != "":
			return fmt.Sprintf("turn binding %d: %s", i, idProblem)
		case !nonEmptyObject(b.Binding):
			return fmt.Sprintf("turn binding %d is not a non-empty JSON object", i)
		case bindingProblem(b.Binding) != "":
			return fmt.Sprintf("turn binding %d: %s", i, bindingProblem(b.Binding))
		case seen[id]:
			return fmt.Sprintf("provider turn id %q is returned twice", id)
		}
		seen[id] = true
	}
	return ""
}

// providerIDProblem applies the rules reportSession and reportTurn apply to the same field
// (checkText), so a child the provider names is never one an agent runtime could not report.
func providerIDProblem(field, id string) string {
	if err := checkText(field, &id); err != nil {
		return err.Error()
	}
	return ""
}

// bindingProblem applies the rules of a reported providerTurnBinding (objectOrNil: its size and
// its text) to a binding a provider returned for a child turn, which becomes that turn's binding.
func bindingProblem(binding []byte) string {
	if _, err := objectOrNil("binding", binding); err != nil {
		return err.Error()
	}
	return ""
}
