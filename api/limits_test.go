package api

import (
	"strings"
	"testing"
	"time"
)

func TestParseLimits(t *testing.T) {
	def, err := ParseLimits(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	// The defaults add up to the spec's 60 seconds.
	if def.RequestBudget != 60*time.Second || def.HeaderTimeout+def.handlerTimeout()+def.WriteReserve != def.RequestBudget ||
		def.handlerTimeout() != RequestTimeoutDefault || def.writeTimeout() != 50*time.Second ||
		def.BodyIdleTimeout != 10*time.Second || def.HeaderBytesMax != 64<<10 || def.ConnsPerClientMax != 128 {
		t.Fatalf("defaults %+v (handler %v)", def, def.handlerTimeout())
	}
	tests := []struct {
		env     map[string]string
		check   func(Limits) bool
		errName string // the variable the error must name; "" for none
	}{
		{map[string]string{"GATEWAY_REQUEST_TIMEOUT": "90s", "GATEWAY_BODY_IDLE_TIMEOUT": "2s"},
			func(l Limits) bool { return l.handlerTimeout() == 75*time.Second && l.BodyIdleTimeout == 2*time.Second }, ""},
		{map[string]string{"GATEWAY_CONNS_PER_CLIENT_MAX": "off"}, func(l Limits) bool { return l.ConnsPerClientMax < 0 }, ""},
		{map[string]string{"GATEWAY_CONNS_PER_CLIENT_MAX": "16", "GATEWAY_HEADER_BYTES_MAX": "16384"},
			func(l Limits) bool { return l.ConnsPerClientMax == 16 && l.HeaderBytesMax == 16384 }, ""},
		{map[string]string{"GATEWAY_REQUEST_TIMEOUT": "soon"}, nil, "GATEWAY_REQUEST_TIMEOUT"},
		{map[string]string{"GATEWAY_HEADER_TIMEOUT": "-1s"}, nil, "GATEWAY_HEADER_TIMEOUT"},
		{map[string]string{"GATEWAY_REQUEST_TIMEOUT": "15s"}, nil, "GATEWAY_REQUEST_TIMEOUT"}, // 10 + 5 leave nothing
		{map[string]string{"GATEWAY_BODY_IDLE_TIMEOUT": "50s"}, nil, "GATEWAY_BODY_IDLE_TIMEOUT"},
		{map[string]string{"GATEWAY_HEADER_BYTES_MAX": "100"}, nil, "GATEWAY_HEADER_BYTES_MAX"},
		{map[string]string{"GATEWAY_HEADER_BYTES_MAX": "1048576"}, nil, "GATEWAY_HEADER_BYTES_MAX"},
		{map[string]string{"GATEWAY_CONNS_PER_CLIENT_MAX": "0"}, nil, "GATEWAY_CONNS_PER_CLIENT_MAX"},
		{map[string]string{"GATEWAY_CONNS_PER_CLIENT_MAX": "many"}, nil, "GATEWAY_CONNS_PER_CLIENT_MAX"},
	}
	for _, tt := range tests {
		l, err := ParseLimits(func(k string) string { return tt.env[k] })
		switch {
		case tt.errName != "" && (err == nil || !strings.Contains(err.Error(), tt.errName+": ")):
			t.Errorf("%v: error %v, want one naming %s", tt.env, err, tt.errName)
		case tt.errName == "" && (err != nil || !tt.check(l)):
			t.Errorf("%v: %+v, %v", tt.env, l, err)
		}
	}
}

// NewHTTPServer's deadlines are the Limits': headers, then the rest of the
// budget for writing, and a header backstop far above the enveloped bound.
func TestNewHTTPServerDeadlines(t *testing.T) {
	lim := Limits{}.withDefaults()
	srv := NewHTTPServer(nil, Limits{}, nil)
	if srv.ReadHeaderTimeout != lim.HeaderTimeout || srv.WriteTimeout != lim.RequestBudget-lim.HeaderTimeout ||
		srv.ReadTimeout != lim.RequestBudget-lim.WriteReserve || srv.IdleTimeout != lim.IdleTimeout ||
		srv.MaxHeaderBytes < 2*lim.HeaderBytesMax || srv.ErrorLog == nil {
		t.Fatalf("server %+v for limits %+v", srv, lim)
	}
}
