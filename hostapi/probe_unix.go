//go:build unix

package hostapi

import (
	"errors"
	"net"
	"syscall"
)

// prober returns what tells, without blocking or consuming anything,
// whether the peer of conn has closed it: a MSG_PEEK|MSG_DONTWAIT recv
// reads 0 bytes at end of stream, EAGAIN while the connection is idle.
func prober(conn net.Conn) (gone func() bool, ok bool) {
	sc, isSys := conn.(syscall.Conn)
	if !isSys {
		return nil, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, false
	}
	return func() bool {
		var b [1]byte
		closed := false
		cerr := rc.Control(func(fd uintptr) {
			n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
			switch {
			case err == nil:
				closed = n == 0 // data waiting (n > 0) is not a hang-up
			case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EWOULDBLOCK), errors.Is(err, syscall.EINTR):
			default:
				closed = true // reset, or otherwise broken
			}
		})
		return closed || cerr != nil
	}, true
}
