package testredis

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the server get SIGKILL if the test binary dies
// without running its cleanups (a panic, go test's -timeout).
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
