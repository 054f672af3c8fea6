//go:build !linux

package session

import (
	"syscall"
	"time"
)

// TreeMechanism says how this process stops a session's whole process
// tree: only its process group, where there are no cgroups nor /proc.
func TreeMechanism() string { return "the process group" }

type cgroup struct{ dir string }

func newCgroup(owner, task, session string) *cgroup                      { return nil }
func (c *cgroup) attach(attrs *syscall.SysProcAttr)                      {}
func (c *cgroup) signal(skip int, sig syscall.Signal)                    {}
func (c *cgroup) kill()                                                  {}
func (c *cgroup) started()                                               {}
func (c *cgroup) procs() []int                                           { return nil }
func (c *cgroup) end(what string, skip int, d time.Duration) error       { return nil }
func endTaskCgroups(owner, task, keep string, grace time.Duration) error { return nil }
