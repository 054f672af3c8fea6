//go:build !linux

package engine

import "net"

// checkPeer relies on the socket's 0600 mode in its 0700 directory where
// the kernel offers no SO_PEERCRED.
func checkPeer(*net.UnixConn) error { return nil }
