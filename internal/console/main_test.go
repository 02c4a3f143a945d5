package console_test

import (
	"testing"

	"github.com/paygate/gateway/ledger/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }
