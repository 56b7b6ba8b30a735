//go:build !linux

package loadbench

import "os/exec"

// DieWithParent does nothing outside Linux (the bench reads /proc and runs
// on Linux only).
func DieWithParent(*exec.Cmd) {}
