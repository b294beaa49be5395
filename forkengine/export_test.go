package forkengine

import "time"

// SetCheckpointTimeout sets how long one try of a checkpoint may take (tests: a try that must run
// out of time without the test waiting the default ten seconds).
func SetCheckpointTimeout(c *Config, d time.Duration) { c.checkpointTimeout = d }

// SetTicker replaces time.NewTicker in MaintainLeases (tests: ticks driven by the test's clock).
func SetTicker(c *Config, newTicker func(period time.Duration) (<-chan time.Time, func())) {
	c.newTicker = newTicker
}
