package main

import (
	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/providers/webhook"
)

// addWebhook registers the webhook provider (an external adapter over HTTP/JSON, see
// docs/providers.md) when -webhook-url is set. Sessions reported with provider "webhook" use it.
func addWebhook(cfg config, ds map[string]forkengine.Driver) {
	if cfg.webhookURL == "" {
		return
	}
	ds["webhook"] = webhook.New(webhook.Options{BaseURL: cfg.webhookURL, Timeout: cfg.webhookTimeout})
}
