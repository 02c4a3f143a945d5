package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/tools/internal/harness"
)

// The move as an operator runs it: `gateway cells move --shop-no … --to
// b2` in a process of its own, with GATEWAY_CELLS; and the same process
// killed with SIGKILL in the middle of the move.

// moveOutput is what `gateway cells move` prints.
type moveOutput struct {
	ShopNo   string `json:"shopNo"`
	From     string `json:"from"`
	To       string `json:"to"`
	Rows     int64  `json:"rowsCopied"`
	PauseMs  int64  `json:"pauseMs"`
	Resumed  bool   `json:"resumed"`
	CopyMs   int64  `json:"copyMs"`
	TailMs   int64  `json:"tailMs"`
	VerifyMs int64  `json:"verifyMs"`
	RemoveMs int64  `json:"removeMs"`
	HeadSeq  int64  `json:"headSeq"`
	HeadHash string `json:"headHash"`
}

// cellsCommand is `gateway args…` with GATEWAY_CELLS=cellsEnv; out gets
// its stdout and stderr.
func (e *env) cellsCommand(ctx context.Context, cellsEnv string, out *bytes.Buffer, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, e.bin, args...)
	cmd.Env = append(harness.MinimalEnv(), cellsEnv, "DATABASE_ALLOW_SUPERUSER=1",
		"GATEWAY_DATA_KEY="+hex.EncodeToString(e.dataKey), "GATEWAY_DATA_DIR="+filepath.Join(e.tmp, "data-cells-move"),
		"GATEWAY_LOG_LEVEL=warn")
	cmd.Stdout, cmd.Stderr = out, out
	return cmd
}

// runMoveCommand runs `gateway cells move --shop-no shopNo --to to`
// (extra flags after) to its end and reads what it printed.
func (e *env) runMoveCommand(ctx context.Context, cellsEnv, shopNo, to string, extra ...string) (moveOutput, string, error) {
	var out bytes.Buffer
	cmd := e.cellsCommand(ctx, cellsEnv, &out, append([]string{"cells", "move", "--shop-no", shopNo, "--to", to}, extra...)...)
	return parseMove(cmd.Run(), &out)
}

// parseMove reads what `gateway cells move` printed, after it ended with
// err.
func parseMove(err error, out *bytes.Buffer) (moveOutput, string, error) {
	text := strings.TrimSpace(out.String())
	var mo moveOutput
	if err != nil {
		return mo, text, fmt.Errorf("gateway cells move: %w: %s", err, lastLines(text, 10))
	}
	// The JSON is the last thing printed; warnings come before it.
	if i := strings.Index(text, "{"); i >= 0 {
		_ = json.Unmarshal([]byte(text[i:]), &mo)
	}
	return mo, text, nil
}

// moveStates are the states of cellmove_moves in which a move is in its
// middle: copied, the merchant paused (fenced) or verified or switched,
// the source not yet emptied.
var moveStates = []string{"paused", "verified", "switched"}

// runningMove is `gateway cells move` started in the background.
type runningMove struct {
	cmd    *exec.Cmd
	out    bytes.Buffer
	exited chan error
}

func (e *env) startMove(ctx context.Context, cellsEnv, shopNo, to string) (*runningMove, error) {
	m := &runningMove{exited: make(chan error, 1)}
	m.cmd = e.cellsCommand(ctx, cellsEnv, &m.out, "cells", "move", "--shop-no", shopNo, "--to", to)
	if err := m.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { m.exited <- m.cmd.Wait() }()
	return m, nil
}

// waitMiddle watches the move's row at the source (src) until it reaches
// one of the middle states. An error says the move ended or failed
// before, or got no further in three minutes (the process is then killed).
func (m *runningMove) waitMiddle(ctx context.Context, src bun.IDB, shopNo string) error {
	deadline := time.Now().Add(3 * time.Minute)
	for {
		select {
		case err := <-m.exited:
			m.exited <- err // for the caller's wait
			return fmt.Errorf("the move ended before a middle state (%v): %s", err, lastLines(m.out.String(), 5))
		default:
		}
		state, err := moveState(ctx, src, shopNo)
		if err == nil && stateIn(state, moveStates) {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			_ = m.cmd.Process.Kill()
			err := <-m.exited
			_ = err // killed: its status says nothing more
			return fmt.Errorf("no middle state within 3 minutes (last %q, %v)", state, err)
		}
		time.Sleep(2 * time.Millisecond) // polling the state at the source
	}
}

// killMoveMidway starts `gateway cells move`, waits for the middle of the
// move, stops the process with SIGSTOP, so that the state read next is
// the one it is killed in, reads it, and kills it with SIGKILL. It returns
// that state, "" with an error when the move ended or failed before.
func (e *env) killMoveMidway(ctx context.Context, cellsEnv string, src bun.IDB, shopNo, to string) (string, error) {
	m, err := e.startMove(ctx, cellsEnv, shopNo, to)
	if err != nil {
		return "", err
	}
	if err := m.waitMiddle(ctx, src, shopNo); err != nil {
		return "", err
	}
	_ = m.cmd.Process.Signal(syscall.SIGSTOP)
	state, err := moveState(ctx, src, shopNo)
	_ = m.cmd.Process.Kill()
	if exitErr := <-m.exited; exitErr != nil {
		_ = exitErr // killed: its status says nothing more
	}
	if err != nil {
		return "", fmt.Errorf("reading the state of the stopped move: %w", err)
	}
	return state, nil
}

// moveState is the state of the merchant's latest move at the source.
func moveState(ctx context.Context, src bun.IDB, shopNo string) (string, error) {
	var state string
	err := src.NewRaw("select state from cellmove_moves where shop_no = ? order by id desc limit 1", shopNo).Scan(ctx, &state)
	return state, err
}

func stateIn(s string, set []string) bool {
	for _, x := range set {
		if s == x {
			return true
		}
	}
	return false
}

// auditVerifyCells runs `gateway audit verify` over every cell of cellsEnv
// (each cell's journal and the directory's checks).
func (e *env) auditVerifyCells(ctx context.Context, cellsEnv string) (bool, string) {
	var out bytes.Buffer
	err := e.cellsCommand(ctx, cellsEnv, &out, "audit", "verify").Run()
	text := strings.TrimSpace(out.String())
	if err != nil {
		return false, fmt.Sprintf("%v: %s", err, lastLines(text, 20))
	}
	return true, lastLines(text, 3)
}

// moveKillingServe runs `gateway cells move` of shopNo out of src and,
// once the move is in its middle, kills the serving gateway with SIGKILL
// and starts it again while the move goes on; it returns what the move
// printed and the state the gateway was killed in. The restarted gateway
// checks every cell at its start (ids, data key) and rebuilds its routing
// from the directory, mid-move.
func (st *moveStack) moveKillingServe(ctx context.Context, e *env, src *cellStack, shopNo, to string) (moveOutput, string, string, error) {
	m, err := e.startMove(ctx, st.spec, shopNo, to)
	if err != nil {
		return moveOutput{}, "", "", err
	}
	if err := m.waitMiddle(ctx, src.db, shopNo); err != nil {
		return moveOutput{}, "", "", err
	}
	state, _ := moveState(ctx, src.db, shopNo)
	st.gw.Kill()
	restartErr := st.gw.Start(ctx)
	mo, out, err := parseMove(<-m.exited, &m.out)
	if restartErr != nil {
		return mo, out, state, fmt.Errorf("restarting the serving gateway mid-move: %w", restartErr)
	}
	return mo, out, state, err
}
