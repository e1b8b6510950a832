package cache

import (
	"os"
	"syscall"
)

func statID(st os.FileInfo) fileID {
	id := basicID(st)
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		id.dev, id.ino = uint64(s.Dev), s.Ino
		id.ctime = s.Ctim.Nano()
	}
	return id
}
