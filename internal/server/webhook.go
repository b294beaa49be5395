package server

import (
	"net/http"

	"github.com/forkgraph/forkgraph/forkengine"
	"github.com/forkgraph/forkgraph/providers/webhook"
)

// addWebhook registers the webhook provider (an external adapter over HTTP/JSON, see
// docs/providers.md) when -webhook-url is set, calling it with client (nil: a plain one).
// Sessions reported with provider "webhook" use it.
func addWebhook(cfg config, ds map[string]forkengine.Driver, client *http.Client) {
	if cfg.webhookURL == "" {
		return
	}
	ds["webhook"] = webhook.New(webhook.Options{BaseURL: cfg.webhookURL, Timeout: cfg.webhookTimeout, Client: client})
}
