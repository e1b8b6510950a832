//go:build !linux

package cache

import "os"

func statID(st os.FileInfo) fileID { return basicID(st) }
