package loadbench

import (
	"os/exec"
	"syscall"
)

// DieWithParent makes the child get SIGKILL if the bench dies first, so
// that an interrupted bench leaves no bot, null bot or Redis behind.
func DieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
