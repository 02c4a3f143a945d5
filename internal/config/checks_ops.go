package config

import (
	"fmt"
	"os"
	"path/filepath"
)

// checkBackupRepo refuses a GATEWAY_BACKUP_REPO without the pgBackRest
// configuration the backup-age metric reads (a typo would otherwise show
// as a backup that never happened, or as nothing at all).
func checkBackupRepo(v string) error {
	if v == "" {
		return nil
	}
	if _, err := os.Stat(filepath.Join(v, "pgbackrest.conf")); err != nil {
		return fmt.Errorf("%q holds no pgbackrest.conf", v)
	}
	return nil
}
