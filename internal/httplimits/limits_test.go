package httplimits

import (
	"strings"
	"testing"
	"time"
)

// Check gives the defaults and refuses bounds out of range and phases that
// do not fit the budget, naming the variable (the syntax of each value is
// internal/config's, tested there).
func TestLimitsCheck(t *testing.T) {
	t.Parallel()
	def, err := Limits{}.Check()
	if err != nil {
		t.Fatal(err)
	}
	// The defaults add up to the spec's 60 seconds.
	if def.RequestBudget != 60*time.Second || def.HeaderTimeout+def.HandlerTimeout()+def.WriteReserve != def.RequestBudget ||
		def.HandlerTimeout() != 45*time.Second || def.WriteTimeout() != 50*time.Second ||
		def.BodyIdleTimeout != 10*time.Second || def.HeaderBytesMax != 64<<10 || def.ConnsPerClientMax != 128 {
		t.Fatalf("defaults %+v (handler %v)", def, def.HandlerTimeout())
	}
	tests := []struct {
		in      Limits
		check   func(Limits) bool
		errName string // the variable the error must name; "" for none
	}{
		{Limits{RequestBudget: 90 * time.Second, BodyIdleTimeout: 2 * time.Second},
			func(l Limits) bool { return l.HandlerTimeout() == 75*time.Second && l.BodyIdleTimeout == 2*time.Second }, ""},
		{Limits{ConnsPerClientMax: -1}, func(l Limits) bool { return l.ConnsPerClientMax < 0 }, ""},
		{Limits{ConnsPerClientMax: 16, HeaderBytesMax: 16384},
			func(l Limits) bool { return l.ConnsPerClientMax == 16 && l.HeaderBytesMax == 16384 }, ""},
		{Limits{HeaderTimeout: -time.Second}, nil, "GATEWAY_HEADER_TIMEOUT"},
		{Limits{RequestBudget: 15 * time.Second}, nil, "GATEWAY_REQUEST_TIMEOUT"}, // 10 + 5 leave nothing
		{Limits{BodyIdleTimeout: 50 * time.Second}, nil, "GATEWAY_BODY_IDLE_TIMEOUT"},
		{Limits{HeaderBytesMax: 100}, nil, "GATEWAY_HEADER_BYTES_MAX"},
		{Limits{HeaderBytesMax: 1 << 20}, nil, "GATEWAY_HEADER_BYTES_MAX"},
		{Limits{ConnsPerClientMax: ConnsPerClientLimit + 1}, nil, "GATEWAY_CONNS_PER_CLIENT_MAX"},
	}
	for _, tt := range tests {
		l, err := tt.in.Check()
		switch {
		case tt.errName != "" && (err == nil || !strings.Contains(err.Error(), tt.errName+": ")):
			t.Errorf("%+v: error %v, want one naming %s", tt.in, err, tt.errName)
		case tt.errName == "" && (err != nil || !tt.check(l)):
			t.Errorf("%+v: %+v, %v", tt.in, l, err)
		}
	}
}
