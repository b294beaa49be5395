// Package simulated is forkgraph's built-in, deterministic provider driver. It stands in for a
// real agent runtime so that every fork phase and every delivery disposition can be seen and
// tested without one.
//
// Each session scripts its own behaviour through the "simulated" object of its settings:
//
//	{"simulated": {"fork": "accepted", "error": "", "latencyMs": 100, "probe": true,
//	               "bindingMode": "host_copy", "reconcile": "found", "reconcileAfter": 0}}
//
// Every key is optional. fork is one of accepted (default), rejected, not_started or unknown;
// error replaces the default error text of a non-accepted outcome; latencyMs is how long Fork
// takes (default Options.Latency); probe=false makes every turn of the session unforkable;
// bindingMode is host_copy (default) or provider_owned; reconcile is what an unknown delivery's
// reconciliation finds: found (default: the child the fork would have made), absent or unknown;
// reconcileAfter answers unknown for that many attempts first. A malformed script is refused
// when the session is reported (BAD_USER_INPUT, reason invalid_simulated_script).
//
// Latency applies to Fork only. The engine calls Describe when a fork starts and again just
// before dispatch, and probes whenever a client asks for forkability, so delaying those would
// only slow reads. Because Fork takes latencyMs and materialisation follows it, a subscriber sees
// the operation pass through FROZEN, DISPATCHING and MATERIALIZING before COMMITTED.
//
// Child identities are derived from (workspace, operation id), so a replay of the same
// operation yields the same child and two operations never share one.
package simulated
