package config

import (
	"reflect"
	"testing"
)

// A misspelt GATEWAY_* variable is named, with the setting it was probably
// meant to be; the known settings, other programs' variables and the
// tests' own are not.
func TestUnknownVariables(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		environ []string
		want    []Unknown
	}{
		{"none", []string{"PATH=/bin", "GATEWAY_HOLD_EXPIRY=1h", "DATABASE_URL=postgres://x"}, nil},
		{"typo", []string{"GATEWAY_HOLD_EXPIRE=1h"}, []Unknown{{"GATEWAY_HOLD_EXPIRE", "GATEWAY_HOLD_EXPIRY"}}},
		{"transposed", []string{"GATEWAY_DATA_DRI=/x"}, []Unknown{{"GATEWAY_DATA_DRI", "GATEWAY_DATA_DIR"}}},
		{"missing letter", []string{"GATEWAY_SHUTDOWN_DRAN=1s"}, []Unknown{{"GATEWAY_SHUTDOWN_DRAN", "GATEWAY_SHUTDOWN_DRAIN"}}},
		{"nothing near", []string{"GATEWAY_FROBNICATE_EVERYTHING=1"}, []Unknown{{"GATEWAY_FROBNICATE_EVERYTHING", ""}}},
		{"sorted, once each", []string{"GATEWAY_ZZZ=1", "GATEWAY_ADRR=x", "GATEWAY_ZZZ=2"},
			[]Unknown{{"GATEWAY_ADRR", "GATEWAY_ADDR"}, {"GATEWAY_ZZZ", ""}}},
		{"tests' own", []string{"GATEWAY_TEST_REQUIRE_BROWSER=1", "GATEWAY_UPDATE_SCREENSHOTS=1"}, nil},
		{"not ours", []string{"XGATEWAY_ADDR=1", "gateway_addr=1"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := UnknownVariables(tc.environ); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("UnknownVariables(%q) = %+v, want %+v", tc.environ, got, tc.want)
			}
		})
	}
}

func TestEditDistance(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"ADDR", "ADRR", 1}, {"same", "same", 0}} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
