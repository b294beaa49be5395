package server

import (
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/forkgraph/forkgraph/internal/heapfloor"
)

func TestConfig(t *testing.T) {
	t.Parallel()
	env := map[string]string{"FORKGRAPH_ADDR": "127.0.0.1:9", "FORKGRAPH_BARRIER": "off", "FORKGRAPH_TOKENS": "aaaaaaaaaaaaaaaa=w1,bbbbbbbbbbbbbbbb=w2"}
	cfg, err := parseConfig([]string{"-addr", "127.0.0.1:7"}, func(k string) string { return env[k] }, io.Discard)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:7", cfg.addr, "a flag wins over the environment")
	require.False(t, cfg.barrier)
	require.Equal(t, 2, cfg.auth.tokens.Len())
	require.Equal(t, "./forkgraph.db", cfg.db)

	_, err = parseConfig(nil, func(k string) string { return map[string]string{"FORKGRAPH_SIM_LATENCY": "soon"}[k] }, io.Discard)
	require.ErrorContains(t, err, "FORKGRAPH_SIM_LATENCY")
	_, err = parseConfig([]string{"-sim-latency", "-5s"}, func(string) string { return "" }, io.Discard)
	require.ErrorContains(t, err, "-sim-latency must not be negative")

	require.NotContains(t, drivers(cfg, nil), "webhook", "no adapter configured")
	withWebhook, err := parseConfig([]string{"-webhook-url", "http://127.0.0.1:9/adapter"}, func(string) string { return "" }, io.Discard)
	require.NoError(t, err)
	require.Contains(t, drivers(withWebhook, nil), "webhook")
	require.Contains(t, drivers(withWebhook, nil), "simulated")
}

func TestSubscriberQueueFlag(t *testing.T) {
	t.Parallel()
	none := func(string) string { return "" }
	cfg, err := parseConfig(nil, none, io.Discard)
	require.NoError(t, err)
	require.Equal(t, int64(defaultSubscriberQueue), cfg.queue)
	cfg, err = parseConfig([]string{"-subscriber-queue", "16"}, none, io.Discard)
	require.NoError(t, err)
	require.Equal(t, int64(16), cfg.queue)
	_, err = parseConfig([]string{"-subscriber-queue", "0"}, none, io.Discard)
	require.ErrorContains(t, err, "-subscriber-queue")
}

func TestGCHeapFloorFlag(t *testing.T) {
	t.Parallel()
	none := func(string) string { return "" }
	cfg, err := parseConfig(nil, none, io.Discard)
	require.NoError(t, err)
	require.Equal(t, int64(heapfloor.Default), cfg.gcHeapFloor)
	cfg, err = parseConfig(nil, func(k string) string { return map[string]string{"FORKGRAPH_GC_HEAP_FLOOR": "0"}[k] }, io.Discard)
	require.NoError(t, err)
	require.Zero(t, cfg.gcHeapFloor)
	_, err = parseConfig([]string{"-gc-heap-floor", "-1"}, none, io.Discard)
	require.ErrorContains(t, err, "-gc-heap-floor")
}

func TestForkingFlag(t *testing.T) {
	t.Parallel()
	none := func(string) string { return "" }
	cfg, err := parseConfig(nil, none, io.Discard)
	require.NoError(t, err)
	require.True(t, cfg.forking, "forking is on by default")
	cfg, err = parseConfig(nil, func(k string) string { return map[string]string{"FORKGRAPH_FORKING": "off"}[k] }, io.Discard)
	require.NoError(t, err)
	require.False(t, cfg.forking)
	cfg, err = parseConfig([]string{"-forking=false"}, none, io.Discard)
	require.NoError(t, err)
	require.False(t, cfg.forking)
}

func TestOpenModeListensOnLoopbackOnly(t *testing.T) {
	t.Parallel()
	env := func(string) string { return "" }
	_, err := parseConfig([]string{"-addr", "0.0.0.0:8080"}, env, io.Discard)
	require.ErrorIs(t, err, errOpenModeExposed)
	require.ErrorContains(t, err, "-insecure-open-mode")
	_, err = parseConfig([]string{"-addr", ":8080"}, env, io.Discard)
	require.ErrorIs(t, err, errOpenModeExposed)

	cfg, err := parseConfig([]string{"-addr", "0.0.0.0:8080", "-insecure-open-mode"}, env, io.Discard)
	require.NoError(t, err)
	require.False(t, cfg.edge.hosts.Allows("192.168.1.5:8080"), "still loopback names only, unless -allowed-hosts says more")
	_, err = parseConfig([]string{"-addr", "0.0.0.0:8080"}, func(k string) string {
		return map[string]string{"FORKGRAPH_INSECURE_OPEN_MODE": "yes"}[k]
	}, io.Discard)
	require.NoError(t, err)
	cfg, err = parseConfig([]string{"-addr", "0.0.0.0:8080", "-tokens", "tttttttttttttttt=w"}, env, io.Discard)
	require.NoError(t, err, "with tokens any address is fine")
	require.True(t, cfg.edge.hosts.Allows("api.example.com"))
	_, err = parseConfig([]string{"-cors-origins", "app.example.com"}, env, io.Discard)
	require.ErrorContains(t, err, "-cors-origins")
	_, err = parseConfig([]string{"-trusted-proxies", "nope"}, env, io.Discard)
	require.ErrorContains(t, err, "-trusted-proxies")
}

func TestObserveFlagsHaveVariables(t *testing.T) {
	t.Parallel()
	env := map[string]string{"FORKGRAPH_LOG_FORMAT": "json", "FORKGRAPH_LOG_LEVEL": "warn", "FORKGRAPH_METRICS_ADDR": "127.0.0.1:9464"}
	cfg, err := parseConfig([]string{"-log-level", "debug"}, func(k string) string { return env[k] }, io.Discard)
	require.NoError(t, err)
	require.Equal(t, observeConfig{logFormat: "json", logLevel: "debug", metricsAddr: "127.0.0.1:9464"}, cfg.observe,
		"variables set the defaults, a flag wins")
	cfg, err = parseConfig(nil, func(string) string { return "" }, io.Discard)
	require.NoError(t, err)
	require.Equal(t, observeConfig{logFormat: "text", logLevel: "info"}, cfg.observe)
}
