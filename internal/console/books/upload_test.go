package books

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The four reconciliation pages (settlement, refund file, bank statement,
// rail report) are one handler (upload.go): a page that read its own file, period or
// verdict would answer and record apart from the others, as the settlement
// page once did beside the bank's and the rail's shared one. So each call
// that does is in one file of the console's code, whatever its package.
func TestReconciliationUploadIsOneHandler(t *testing.T) {
	homes := map[string][]string{}
	calls := []string{"reconcile.NewPeriod(", "reconcile.IsUnusable(", "reconcile.UnusableVerdict(", `FormFile("file")`}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, c := range calls {
			// The sanctions list's upload is not a reconciliation.
			if bytes.Contains(src, []byte(c)) && !bytes.Contains(src, []byte("sanctions")) {
				homes[c] = append(homes[c], filepath.ToSlash(path))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		if len(homes[c]) != 1 {
			t.Errorf("%s is in %q, want one file: the reconciliation pages' one upload handler", c, homes[c])
		}
	}
}
