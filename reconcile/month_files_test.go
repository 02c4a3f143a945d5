package reconcile_test

import "testing"

func (mo *month) checkFiles(t *testing.T) {}
