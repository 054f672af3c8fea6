//go:build !linux

package sched

// ShortSlice does nothing where the kernel takes no slice suggestion.
func ShortSlice() error { return nil }

// DefaultSlice does nothing where the kernel takes no slice suggestion.
func DefaultSlice() error { return nil }
