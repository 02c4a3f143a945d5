package database

import (
	"testing"
	"time"
)

// connect_timeout is per host and comes from the URL unless DBOptions say
// otherwise; 2 s when neither does.
func TestConnConfigConnectTimeout(t *testing.T) {
	t.Parallel()
	const multi = "postgres://gw@127.0.0.1:1,127.0.0.1:2/gateway?target_session_attrs=read-write"
	for _, tt := range []struct {
		url  string
		opt  time.Duration
		want time.Duration
	}{
		{multi, 0, 2 * time.Second},
		{multi + "&connect_timeout=7", 0, 7 * time.Second},
		{multi + "&connect_timeout=7", 3 * time.Second, 3 * time.Second},
	} {
		cfg, o, err := ConnConfig(tt.url, DBOptions{ConnectTimeout: tt.opt})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.ConnectTimeout != tt.want || o.ConnectTimeout != tt.want {
			t.Errorf("%s with ConnectTimeout %s: %s (options %s), want %s", tt.url, tt.opt, cfg.ConnectTimeout, o.ConnectTimeout, tt.want)
		}
		if len(cfg.Fallbacks) == 0 || cfg.ValidateConnect == nil {
			t.Errorf("%s: %d fallback hosts, ValidateConnect set %v: the multi-host form was lost", tt.url, len(cfg.Fallbacks), cfg.ValidateConnect != nil)
		}
	}
	if _, _, err := ConnConfig("postgres://gw@h/db?target_session_attrs=bogus", DBOptions{}); err == nil {
		t.Error("an unknown target_session_attrs was accepted")
	}
}
