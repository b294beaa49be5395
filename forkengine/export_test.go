package forkengine

import "time"

// SetCheckpointTimeout sets how long one try of a checkpoint may take (tests: a try that must run
// out of time without the test waiting the default ten seconds).
func SetCheckpointTimeout(c *Config, d time.Duration) { c.checkpointTimeout = d }
