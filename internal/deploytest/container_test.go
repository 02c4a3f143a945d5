package deploytest

import (
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// nonRoot is the image's user (deploy/container/Containerfile).
const nonRoot = 65532

var (
	contextOnce sync.Once
	contextDir  string
	contextErr  error
)

// buildContext runs deploy/container/context once for the package: the
// static binary and the rest of the image's files, in a directory of its
// own.
func buildContext(t *testing.T) string {
	t.Helper()
	// The fast tier (make test-short) runs what needs no build of the
	// product: compiling the static binary and building the image took
	// most of its time (265 s of 18 minutes on a loaded machine).
	if testing.Short() {
		t.Skip("builds the static binary and the container image: make test")
	}
	contextOnce.Do(func() {
		dir, err := os.MkdirTemp("", "gateway-image-")
		if err != nil {
			contextErr = err
			return
		}
		contextDir = dir
		out, err := exec.Command(deployDir+"/container/context", dir).CombinedOutput()
		if err != nil {
			t.Logf("context: %s", out)
			contextErr = err
		}
	})
	if contextErr != nil {
		t.Fatalf("deploy/container/context: %v", contextErr)
	}
	return contextDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if contextDir != "" {
		_ = os.RemoveAll(contextDir)
	}
	os.Exit(code)
}

// TestStaticBinaryAssumptions checks what running on `scratch` assumes of
// the binary, without a container: it is statically linked (no
// interpreter, no shared library), and `version` and `--help` work with an
// empty environment, as a non-root user, chrooted into a directory holding
// the binary alone — no /etc, no /tmp, no HOME (chroot and the user need
// root; otherwise only the empty environment is checked).
func TestStaticBinaryAssumptions(t *testing.T) {
	bin := filepath.Join(buildContext(t), "gateway")
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s has an interpreter: not static (CGO_ENABLED=0)", bin)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("%s needs shared libraries %v", bin, libs)
	}

	root := t.TempDir()
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "gateway"), string(data), 0o555)
	for _, c := range []struct {
		args []string
		want string
	}{{[]string{"version"}, "gateway "}, {[]string{"--help"}, "serve "}, {[]string{"serve", "--help"}, "-data-dir"}} {
		cmd := exec.Command("/gateway", c.args...)
		cmd.Env = []string{}
		if os.Geteuid() == 0 {
			cmd.Dir = "/"
			cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: nonRoot, Gid: nonRoot}}
		} else {
			cmd.Path = filepath.Join(root, "gateway")
		}
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), c.want) {
			t.Errorf("gateway %v (empty environment, uid %d, chroot %v): %v\n%s", c.args, nonRoot, os.Geteuid() == 0, err, out)
		}
	}
}

// TestContainerImage builds deploy/container/Containerfile with Debian's
// buildah (vfs storage and chroot isolation: no daemon, no user
// namespaces, no registry: the base is scratch) and checks the image:
// a non-root user, the data directory a volume owned by that user, the
// gateway as the entry point; then runs `version` and `--help` in it.
func TestContainerImage(t *testing.T) {
	buildah := needTool(t, "buildah", "GATEWAY_TEST_REQUIRE_BUILDER", "buildah", "TestStaticBinaryAssumptions checks the binary")
	if os.Geteuid() != 0 {
		t.Skip("buildah's chroot isolation needs root here")
	}
	ctx := buildContext(t)
	store := t.TempDir()
	bah := func(args ...string) string {
		t.Helper()
		all := append([]string{"--root", filepath.Join(store, "root"), "--runroot", filepath.Join(store, "run"), "--storage-driver", "vfs"}, args...)
		out, err := exec.Command(buildah, all...).CombinedOutput()
		if err != nil {
			t.Fatalf("buildah %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	bah("bud", "--isolation", "chroot", "--quiet", "-f", deployDir+"/container/Containerfile", "-t", "gateway-test", ctx)

	var image []struct {
		OCIv1 struct {
			Config struct {
				User       string
				Entrypoint []string
				Cmd        []string
				Volumes    map[string]struct{}
				Env        []string
			} `json:"config"`
		}
	}
	if err := json.Unmarshal([]byte("["+bah("inspect", "--type", "image", "localhost/gateway-test")+"]"), &image); err != nil {
		t.Fatal(err)
	}
	cfg := image[0].OCIv1.Config
	if cfg.User != "65532:65532" {
		t.Errorf("the image runs as %q, want 65532:65532 (never root)", cfg.User)
	}
	if _, ok := cfg.Volumes["/var/lib/gateway"]; !ok {
		t.Errorf("volumes %v lack the data directory /var/lib/gateway", cfg.Volumes)
	}
	if strings.Join(cfg.Entrypoint, " ") != "/usr/local/bin/gateway" || strings.Join(cfg.Cmd, " ") != "serve" {
		t.Errorf("entry point %v %v, want /usr/local/bin/gateway serve", cfg.Entrypoint, cfg.Cmd)
	}
	if !strings.Contains(strings.Join(cfg.Env, " "), "GATEWAY_DATA_DIR=/var/lib/gateway") {
		t.Errorf("env %v does not point GATEWAY_DATA_DIR at the volume", cfg.Env)
	}

	ctr := bah("from", "--quiet", "localhost/gateway-test")
	defer bah("rm", ctr)
	mnt := bah("mount", ctr)
	st, err := os.Stat(filepath.Join(mnt, "var/lib/gateway"))
	if err != nil {
		t.Fatal(err)
	}
	if sys := st.Sys().(*syscall.Stat_t); sys.Uid != nonRoot || st.Mode().Perm() != 0o700 {
		t.Errorf("the data directory is uid %d mode %v, want %d and 0700", sys.Uid, st.Mode().Perm(), nonRoot)
	}
	for _, parent := range []string{"var", "var/lib"} {
		if st, err := os.Stat(filepath.Join(mnt, parent)); err != nil || st.Sys().(*syscall.Stat_t).Uid != 0 {
			t.Errorf("/%s is not root's (%v): only the data directory is the user's", parent, err)
		}
	}
	bah("umount", ctr)
	if out := bah("run", "--isolation", "chroot", ctr, "--", "/usr/local/bin/gateway", "version"); !strings.HasPrefix(out, "gateway ") {
		t.Errorf("gateway version in the image: %q", out)
	}
	if out := bah("run", "--isolation", "chroot", ctr, "--", "/usr/local/bin/gateway", "--help"); !strings.Contains(out, "serve ") {
		t.Errorf("gateway --help in the image: %q", out)
	}
}
