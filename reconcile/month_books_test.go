package reconcile_test

import "testing"

func (mo *month) checkBooks(t *testing.T) {}
