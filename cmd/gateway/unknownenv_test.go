package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// A misspelt GATEWAY_* variable is warned of at start, by name and with
// the setting it is nearest to; a known one is not.
func TestUnknownVariablesWarnedAtStart(t *testing.T) {
	t.Parallel()
	environ := []string{"GATEWAY_HOLD_EXPIRE=1h", "GATEWAY_DATA_DIR=/x", "GATEWAY_NOTHING_LIKE_IT_AT_ALL=1", "HOME=/root"}
	getenv := func(string) string { return "" }
	var stdout, stderr bytes.Buffer
	if err := runEnviron(context.Background(), []string{"gateway", "version"}, getenv, environ, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	warned := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		var rec struct{ Level, Msg, Variable, Did_you_mean string }
		if json.Unmarshal([]byte(line), &rec) != nil || rec.Variable == "" {
			continue
		}
		if rec.Level != "WARN" {
			t.Errorf("level %s, want WARN: %s", rec.Level, line)
		}
		warned[rec.Variable] = rec.Did_you_mean
		if !strings.Contains(rec.Msg, rec.Variable) {
			t.Errorf("the message does not name the variable: %s", line)
		}
	}
	want := map[string]string{"GATEWAY_HOLD_EXPIRE": "GATEWAY_HOLD_EXPIRY", "GATEWAY_NOTHING_LIKE_IT_AT_ALL": ""}
	if len(warned) != len(want) {
		t.Fatalf("warned %v, want %v; stderr:\n%s", warned, want, stderr.String())
	}
	for k, v := range want {
		if got, ok := warned[k]; !ok || got != v {
			t.Errorf("%s: warned %v (did you mean %q), want %q", k, ok, got, v)
		}
	}
}
