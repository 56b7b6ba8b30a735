//go:build !linux

package testredis

import "os/exec"

// dieWithParent does nothing outside Linux: a server left behind by a
// test binary that died is killed by hand there.
func dieWithParent(*exec.Cmd) {}
