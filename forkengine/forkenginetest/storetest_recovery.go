package forkenginetest

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/forkengine"
)

// recoveryTests: provider-turn binding recovery (reference §4.6, scenarios 39-42) and the rules
// around it: the proof it needs, what it refuses, that reads never repair, and concurrent forks.
func recoveryTests() map[string]storeTest {
	return map[string]storeTest{
		// 39. Given turn-7 settled without a binding (boundary provider_turn_missing) and its submit
		// claim "opaque-submit-1", when it is forked, then recovery passes the token, the store
		// records the provider turn, the turn is BOUND (a TURN_UPSERTED event says so) and the
		// fork commits through it.
		"Scenario39_BindingRepairFromASubmitClaim": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.source()
			r.turn("turn-7", forkengine.PhaseSettled, false, submitClaim("opaque-submit-1"))
			require.False(t, r.forkable("turn-7"))
			before := turnUpserts(r.events(), "turn-7")
			r.driver.QueueRecover(RecoverStep{Func: func(req forkengine.BindingRecoveryRequest) (forkengine.BindingRecoveryResult, error) {
				return FoundBinding(req, "provider-turn"), nil
			}})

			op, err := r.fork("request-1", "turn-7")
			require.NoError(t, err)
			op = r.process(op)

			require.Equal(t, forkengine.StatusCommitted, op.Status, op.Error)
			reqs := r.driver.RecoverRequests()
			require.Len(t, reqs, 1)
			require.Equal(t, forkengine.BindingProof{ClientSubmitID: "opaque-submit-1"}, reqs[0].Proof)
			require.Equal(t, "provider-session-1", reqs[0].Session.ProviderSessionID)
			require.Equal(t, "turn-7", reqs[0].Turn.ID)
			turn := r.storedTurn("turn-7")
			require.Equal(t, "provider-turn", turn.ProviderTurnID)
			require.JSONEq(t, `{"recovered":"provider-turn"}`, string(turn.ProviderTurnBinding))
			require.True(t, r.forkable("turn-7"), "the turn is BOUND now")
			require.Equal(t, before+1, turnUpserts(r.events(), "turn-7"), "the repair is a TURN_UPSERTED event")
			require.Equal(t, "provider-turn", op.SourceProviderTurnID, "the fork went through the recovered binding")
			require.Equal(t, 1, r.driver.ForkCalls())
		},
		// 40. Given turn-7 bound, but the owning agent rejects its binding (the probe answers false,
		// then true once recovery has run), when it is forked, then it commits after 2 probes.
		"Scenario40_RepairWhenTheOwningAgentRejectsTheBinding": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.source()
			r.turn("turn-7", forkengine.PhaseSettled, true, submitClaim("opaque-submit-7"))
			r.driver.SetTurnProbe("provider-turn-7", false)
			r.driver.QueueRecover(RecoverStep{Func: func(req forkengine.BindingRecoveryRequest) (forkengine.BindingRecoveryResult, error) {
				r.driver.SetTurnProbe("provider-turn-7", true) // the provider's history has it after all
				return forkengine.BindingRecoveryResult{Answer: forkengine.RecoveryFound, ProviderSessionID: "provider-session-1",
					ProviderTurnID: "provider-turn-7", ProviderTurnBinding: json.RawMessage(`{"schemaVersion":1}`)}, nil
			}})
			before := r.events()

			op, err := r.fork("request-1", "turn-7")
			require.NoError(t, err)
			op = r.process(op)

			require.Equal(t, forkengine.StatusCommitted, op.Status, op.Error)
			require.Equal(t, 2, r.driver.ProbeCalls())
			require.Equal(t, 1, r.driver.RecoverCalls())
			require.Equal(t, turnUpserts(before, "turn-7"), turnUpserts(r.events(), "turn-7"),
				"the binding it confirmed was the turn's already: nothing was written")
		},
		// 41. Given recovery is not possible, when turn-7 is forked, then the refusal keeps its
		// reason (provider_turn_missing, or provider_turn_unforkable after a refused probe) and
		// shows nothing of the recovery; nothing is written.
		"Scenario41_RecoveryFailureKeepsTheReason": func(t *testing.T, s forkengine.Store) {
			foreign := func(req forkengine.BindingRecoveryRequest) forkengine.BindingRecoveryResult {
				res := FoundBinding(req, "provider-turn")
				res.ProviderSessionID = "provider-session-of-someone-else"
				return res
			}
			for name, answer := range map[string]func(req forkengine.BindingRecoveryRequest) (forkengine.BindingRecoveryResult, error){
				"absent": func(forkengine.BindingRecoveryRequest) (forkengine.BindingRecoveryResult, error) {
					return forkengine.BindingRecoveryResult{Answer: forkengine.RecoveryAbsent, Error: "diagnostic: history shard 3 unreachable"}, nil
				},
				"ambiguous": func(forkengine.BindingRecoveryRequest) (forkengine.BindingRecoveryResult, error) {
					return forkengine.BindingRecoveryResult{Answer: forkengine.RecoveryAmbiguous, Error: "diagnostic: two turns match"}, nil
				},
				"driver error": func(forkengine.BindingRecoveryRequest) (forkengine.BindingRecoveryResult, error) {
					return forkengine.BindingRecoveryResult{}, errors.New("diagnostic: connection reset")
				},
				"another provider session": func(req forkengine.BindingRecoveryRequest) (forkengine.BindingRecoveryResult, error) {
					return foreign(req), nil
				},
				"no provider turn id": func(req forkengine.BindingRecoveryRequest) (forkengine.BindingRecoveryResult, error) {
					return FoundBinding(req, ""), nil
				},
				"the canonical id": func(req forkengine.BindingRecoveryRequest) (forkengine.BindingRecoveryResult, error) {
					return FoundBinding(req, "turn-7"), nil
				},
				"an empty binding": func(req forkengine.BindingRecoveryRequest) (forkengine.BindingRecoveryResult, error) {
					res := FoundBinding(req, "provider-turn")
					res.ProviderTurnBinding = json.RawMessage(`{}`)
					return res, nil
				},
				"a provider turn another turn owns": func(req forkengine.BindingRecoveryRequest) (forkengine.BindingRecoveryResult, error) {
					return FoundBinding(req, "provider-turn-6"), nil
				},
			} {
				t.Run(name, func(t *testing.T) {
					r := newScenarioRig(t, s)
					r.source()
					r.turn("turn-6", forkengine.PhaseSettled, true, nil)
					r.turn("turn-7", forkengine.PhaseSettled, false, submitClaim("opaque-submit-1"))
					r.driver.QueueRecover(RecoverStep{Func: answer})
					before, events := r.storedTurn("turn-7"), r.events()

					_, err := r.fork("request-"+strings.ReplaceAll(name, " ", "-"), "turn-7")

					requireReason(t, err, forkengine.CodeForkConflict, forkengine.ReasonProviderTurnMissing)
					require.Equal(t, 1, r.driver.RecoverCalls())
					require.NotContains(t, err.Error(), "diagnostic")
					require.NotContains(t, err.Error(), "recover")
					var public *forkengine.Error
					require.ErrorAs(t, err, &public)
					require.Equal(t, `turn "turn-7" has no provider binding`, public.Message)
					require.Equal(t, before, r.storedTurn("turn-7"), "the turn is as it was")
					require.Len(t, r.events(), len(events), "nothing was written")
					require.Zero(t, r.operations())
				})
			}
			// The same after a refused probe: the reason is the probe's.
			r := newScenarioRig(t, s)
			r.source()
			r.turn("turn-8", forkengine.PhaseSettled, true, submitClaim("opaque-submit-8"))
			r.driver.SetTurnProbe("provider-turn-8", false)
			_, err := r.fork("request-probe", "turn-8")
			requireReason(t, err, forkengine.CodeForkConflict, forkengine.ReasonProviderTurnUnforkable)
			require.Equal(t, 1, r.driver.RecoverCalls())
			require.Equal(t, 1, r.driver.ProbeCalls(), "no second probe without a repair")
		},
		// 42. Given a missing source, or a boundary refused for a reason recovery cannot help
		// with, when it is forked, then that refusal comes back and the driver is not called.
		"Scenario42_AMissingSourceIsNotAnUnavailableBoundary": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			_, err := r.fork("request-missing", "turn-7")
			requireReason(t, err, forkengine.CodeNotFound, "")
			r.source()
			r.turn("turn-7", forkengine.PhaseRunning, false, submitClaim("opaque-submit-1"))
			_, err = r.fork("request-running", "turn-7")
			requireReason(t, err, forkengine.CodeForkConflict, forkengine.ReasonTurnNotSettled)
			_, err = r.fork("request-unknown-turn", "turn-99")
			requireReason(t, err, forkengine.CodeForkConflict, forkengine.ReasonTurnNotFound)
			require.Zero(t, r.driverCalls())
		},
		"RecoveryNeedsAProofAndADriverThatRecovers": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.source()
			r.turn("turn-1", forkengine.PhaseSettled, false, nil)
			r.turn("turn-2", forkengine.PhaseSettled, false, &forkengine.SubmissionReport{Content: forkengine.SubmissionMultimodal})
			r.turn("turn-3", forkengine.PhaseSettled, false, &forkengine.SubmissionReport{ClientSubmitID: "submit-3",
				Content: forkengine.SubmissionIncomplete})
			for _, turn := range []string{"turn-1", "turn-2", "turn-3"} {
				_, err := r.fork("request-"+turn, turn)
				requireReason(t, err, forkengine.CodeForkConflict, forkengine.ReasonProviderTurnMissing)
			}
			require.Zero(t, r.driverCalls(), "no proof: the provider is not asked")

			r.turn("turn-4", forkengine.PhaseSettled, false, submitClaim("submit-4"))
			r.driver.SetDescriptor(ScriptedDescriptor, nil) // RecoverBinding false
			_, err := r.fork("request-turn-4", "turn-4")
			requireReason(t, err, forkengine.CodeForkConflict, forkengine.ReasonProviderTurnMissing)
			require.Zero(t, r.driver.RecoverCalls(), "a driver whose descriptor does not recover is not asked")
		},
		"PlainTextProofIsAKeyedDigestTheProviderCanMatch": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.source()
			const text = "Plan the migration of the billing tables"
			r.turn("turn-7", forkengine.PhaseSettled, false, &forkengine.SubmissionReport{Content: forkengine.SubmissionPlainText,
				Text: strPtr(text)})
			stored, err := s.GetSubmission(r.ctx, scenarioWS, "turn-7")
			require.NoError(t, err)
			require.NotContains(t, stored.TextDigest, "billing")
			require.Len(t, stored.TextDigest, 64, "a hex HMAC-SHA256")
			r.driver.QueueRecover(RecoverStep{Func: func(req forkengine.BindingRecoveryRequest) (forkengine.BindingRecoveryResult, error) {
				history := []string{"Hello", text, text + " "} // the provider digests its own texts and compares
				var matches []int
				for i, candidate := range history {
					if forkengine.TextDigest(req.Proof.TextKey, candidate) == req.Proof.TextDigest {
						matches = append(matches, i)
					}
				}
				if len(matches) != 1 || req.Proof.ClientSubmitID != "" {
					return forkengine.BindingRecoveryResult{Answer: forkengine.RecoveryAbsent}, nil
				}
				return FoundBinding(req, "provider-turn-by-text"), nil
			}})
			op, err := r.fork("request-1", "turn-7")
			require.NoError(t, err)
			require.Equal(t, forkengine.StatusCommitted, r.process(op).Status)
			require.Equal(t, "provider-turn-by-text", r.storedTurn("turn-7").ProviderTurnID)
			keys := r.driver.RecoverRequests()
			require.Len(t, keys, 1)
			require.Equal(t, stored.TextDigest, keys[0].Proof.TextDigest)
		},
		"SubmissionIsRecordedOnce": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.source()
			plain := &forkengine.SubmissionReport{Content: forkengine.SubmissionPlainText, Text: strPtr("first prompt")}
			r.turn("turn-1", forkengine.PhaseSubmitted, false, plain)
			r.turn("turn-1", forkengine.PhaseRunning, false, plain) // the same again: fine
			for name, other := range map[string]*forkengine.SubmissionReport{
				"other text":    {Content: forkengine.SubmissionPlainText, Text: strPtr("another prompt")},
				"a submit id":   {ClientSubmitID: "late", Content: forkengine.SubmissionPlainText, Text: strPtr("first prompt")},
				"other content": {Content: forkengine.SubmissionMultimodal},
			} {
				_, err := r.engine.ReportTurn(r.ctx, forkengine.TurnReport{WorkspaceID: scenarioWS, SessionID: scenarioSource,
					ID: "turn-1", Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted, Submission: other})
				requireReason(t, err, forkengine.CodeInvalid, forkengine.ReasonSubmissionChanged)
				require.Equal(t, forkengine.PhaseRunning, r.storedTurn("turn-1").Phase, "%s: nothing of the report is written", name)
			}
		},
		// Reads have no side effects: a probe through any path never repairs, even with a proof
		// that would.
		"ProbesNeverRepair": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.source()
			r.turn("turn-1", forkengine.PhaseSettled, false, submitClaim("submit-1"))
			r.turn("turn-2", forkengine.PhaseSettled, true, submitClaim("submit-2"))
			r.driver.SetTurnProbe("provider-turn-2", false)
			r.driver.QueueRecover(RecoverStep{Func: func(req forkengine.BindingRecoveryRequest) (forkengine.BindingRecoveryResult, error) {
				return FoundBinding(req, "provider-turn-found"), nil
			}})
			before, events := []forkengine.Turn{r.storedTurn("turn-1"), r.storedTurn("turn-2")}, r.events()
			for range 3 {
				require.False(t, r.forkable("turn-1"))
				require.False(t, r.forkable("turn-2"))
			}
			require.Zero(t, r.driver.RecoverCalls())
			require.Equal(t, before, []forkengine.Turn{r.storedTurn("turn-1"), r.storedTurn("turn-2")})
			require.Equal(t, events, r.events())
		},
		// A report that binds the turn while the provider is being asked wins: the recovery's
		// compare and swap finds the binding taken and writes nothing.
		"RecoveryLosesToAReportThatBindsFirst": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			r.source()
			r.turn("turn-7", forkengine.PhaseSettled, false, submitClaim("submit-7"))
			r.driver.QueueRecover(RecoverStep{Func: func(req forkengine.BindingRecoveryRequest) (forkengine.BindingRecoveryResult, error) {
				_, err := r.engine.ReportTurn(r.ctx, forkengine.TurnReport{WorkspaceID: scenarioWS, SessionID: scenarioSource,
					ID: "turn-7", Phase: forkengine.PhaseSettled, Outcome: forkengine.OutcomeCompleted,
					ProviderTurnID: strPtr("provider-turn-reported"), ProviderTurnBinding: json.RawMessage(`{"reported":true}`)})
				require.NoError(t, err)
				return FoundBinding(req, "provider-turn-found"), nil
			}})
			_, err := r.fork("request-1", "turn-7")
			requireReason(t, err, forkengine.CodeForkConflict, forkengine.ReasonProviderTurnMissing)
			require.Equal(t, "provider-turn-reported", r.storedTurn("turn-7").ProviderTurnID, "a binding is never replaced")
			op, err := r.fork("request-2", "turn-7")
			require.NoError(t, err, "the reported binding forks")
			require.Equal(t, "provider-turn-reported", op.SourceProviderTurnID)
		},
		// Two forks of one unbound turn at once, with new request ids each: the binding is written
		// once, one operation is made (the barrier hands the other request the first operation,
		// or a retry does), and the provider is asked to fork once.
		"ConcurrentForksThroughARecoveredTurnForkOnce": func(t *testing.T, s forkengine.Store) {
			r := newScenarioRig(t, s)
			second := newScenarioRig(t, s, func(c *forkengine.Config) { c.InstanceID = "second-instance" })
			r.source()
			r.turn("turn-7", forkengine.PhaseSettled, false, submitClaim("submit-7"))
			found := RecoverStep{Func: func(req forkengine.BindingRecoveryRequest) (forkengine.BindingRecoveryResult, error) {
				return FoundBinding(req, "provider-turn-found"), nil
			}}
			r.driver.QueueRecover(found, found)
			second.driver.QueueRecover(found, found)
			events := turnUpserts(r.events(), "turn-7")
			ops := make([]forkengine.ForkOperation, 2)
			errs := make([]error, 2)
			var wg sync.WaitGroup
			for i, rig := range []*scenarioRig{r, second} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ops[i], errs[i] = rig.fork("request-"+string(rune('a'+i)), "turn-7")
					if forkengine.ErrorCode(errs[i]) == forkengine.CodeForkInProgress {
						ops[i], errs[i] = rig.fork("request-"+string(rune('a'+i)), "turn-7")
					}
				}()
			}
			wg.Wait()
			require.NoError(t, errs[0])
			require.NoError(t, errs[1])
			require.Equal(t, ops[0].ID, ops[1].ID, "one fork of the boundary")
			require.Equal(t, 1, r.operations())
			require.Equal(t, events+1, turnUpserts(r.events(), "turn-7"), "the binding is written once")
			owner := r // the instance that prepared it holds its lease
			if ops[0].LeaseOwner == "second-instance" {
				owner = second
			}
			require.Equal(t, forkengine.StatusCommitted, owner.process(ops[0]).Status)
			require.Equal(t, 1, r.driver.ForkCalls()+second.driver.ForkCalls())
		},
	}
}
