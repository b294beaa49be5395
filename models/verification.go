package models

import "github.com/forkgraph/forkgraph/forkengine"

// ForkVerificationFrom maps the engine's resume check to its API view.
func ForkVerificationFrom(v forkengine.ForkVerification, rel Relations) *ForkVerification {
	out := &ForkVerification{Status: wire[ForkVerificationStatus](v.Status), Reason: optional(v.Reason),
		Resumable: v.Resumable(), Session: SessionFrom(v.Session, rel)}
	if v.Lineage != nil {
		out.Lineage = LineageFrom(*v.Lineage, rel)
	}
	if v.Operation != nil {
		out.ForkOperation = ForkOperationFrom(*v.Operation)
	}
	return out
}
